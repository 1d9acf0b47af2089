/**
 * Review 87 (outbox envelope: keys an event inherits), failing on main.
 *
 * What I did: emit events that are not object literals, the way an application models them: a
 * class instance whose field is a getter on the class (`get tenantID()`, misspelt), and an object
 * made with `Object.create(defaults)` whose defaults hold a misspelt `orderingkey`.
 *
 * What happened: emit reads each field with an ordinary property read, so a correctly spelt
 * inherited field (`get tenantId()`) is stored; but the unknown-key check (review 82) lists only
 * the event's own enumerable keys (Object.keys), so the misspelt inherited `tenantID` is dropped
 * without a word: the event is committed GLOBAL (tenant_id NULL), the very case review 82 closed
 * for literals; the inherited `orderingkey` leaves the event unordered.
 *
 * What should happen: the keys checked are the keys read: an inherited key that is not a field
 * (and holds a value: not undefined, not a method) is refused with FerryValidationError naming it,
 * nothing inserted; inherited fields and methods stay allowed.
 */
import { emit, emitMany, FerryValidationError, type OutboxEventInput } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});
beforeEach(async () => {
  await t.db.execute('DELETE FROM outbox_events');
});

class TenantEvent {
  readonly type = 'order.created';
  readonly payload = { orderId: 7 };
  get tenantID(): string {
    return 'acme';
  }
}

class GoodTenantEvent {
  readonly type = 'order.created';
  readonly payload = { orderId: 8 };
  get tenantId(): string {
    return 'acme';
  }
  describe(): string {
    return `order ${this.payload.orderId}`;
  }
}

function withDefaults(defaults: object): OutboxEventInput {
  return Object.assign(Object.create(defaults) as object, {
    type: 'order.created',
    payload: { orderId: 9 },
  }) as OutboxEventInput;
}

const refusedField = (promise: Promise<unknown>) =>
  promise.then(
    () => 'inserted',
    (e: unknown) => (e instanceof FerryValidationError ? e.field : String(e)),
  );

const inserted = async () =>
  t.db.query<{ tenant_id: string | null }>(`SELECT tenant_id FROM outbox_events ORDER BY seq`);

describe('review87: a key an event inherits', () => {
  it('a class getter misspelt tenantID is refused naming it, nothing inserted', async () => {
    // On main: 'inserted', tenant_id NULL (a global event).
    expect(await refusedField(emit(t.db, new TenantEvent() as unknown as OutboxEventInput))).toBe('tenantID');
    expect(await inserted()).toEqual([]);
  });

  it('a misspelt orderingkey in Object.create defaults is refused; emitMany inserts none', async () => {
    const good = { type: 'order.created', payload: {} };
    expect(await refusedField(emitMany(t.db, [good, withDefaults({ orderingkey: 'order-7' })]))).toBe(
      'orderingkey',
    );
    expect(await inserted()).toEqual([]);
  });

  it('inherited fields, methods and undefined defaults are still taken', async () => {
    await emit(t.db, new GoodTenantEvent() as unknown as OutboxEventInput);
    await emit(t.db, withDefaults({ tenantId: 'beta', note: undefined }));
    expect(await inserted()).toEqual([{ tenant_id: 'acme' }, { tenant_id: 'beta' }]);
  });
});
