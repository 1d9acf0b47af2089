/**
 * How emit and the admin read what an application hands them: every element of an array (holes
 * too), each field of an event once, no key it does not know, and what was checked is what is
 * used (review82-emitManyHoles, -handlerHostileEvent, -envelopeKeys).
 */
import { randomUUID } from 'node:crypto';
import { createOutboxAdmin, emit, emitMany, FerryValidationError, type OutboxEventInput } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const event: OutboxEventInput = { type: 'order.created', payload: { orderId: 1 } };

async function refusal(run: () => Promise<unknown>): Promise<{ field: string; reason: string } | string> {
  try {
    await run();
    return 'accepted';
  } catch (error) {
    if (error instanceof FerryValidationError) return { field: error.field, reason: error.reason };
    return `raw: ${String(error)}`;
  }
}

async function count(): Promise<number> {
  const [row] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox_events');
  return row!.n;
}

describe('emitMany reads every element', () => {
  it('an array whose elements cannot be read is refused on events, nothing inserted', async () => {
    const before = await count();
    const unreadable = new Proxy([event, event], {
      get(target, key, receiver) {
        if (key === '1') throw new Error('element exploded');
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    expect(await refusal(() => emitMany(t.db, unreadable))).toEqual({
      field: 'events',
      reason: 'could not be read: element exploded',
    });
    expect(await count()).toBe(before);
  });

  it('a hole at the end is refused as any element that is not an event', async () => {
    const events: OutboxEventInput[] = [event];
    events.length = 2;
    expect(await refusal(() => emitMany(t.db, events))).toEqual({
      field: 'event',
      reason: 'must be an object',
    });
  });
});

describe('an envelope key emit does not know', () => {
  it('is refused with the spelling it was probably meant as', async () => {
    const misspelt = { ...event, TenantId: 'acme' } as OutboxEventInput;
    expect(await refusal(() => emit(t.db, misspelt))).toEqual({
      field: 'TenantId',
      reason: expect.stringMatching(
        /^is not a field of an event \(known: type, payload, .*\): did you mean tenantId\?$/,
      ),
    });
  });

  it('id: emit chooses it', async () => {
    const withId = { ...event, id: randomUUID() } as OutboxEventInput;
    expect(await refusal(() => emit(t.db, withId))).toMatchObject({
      field: 'id',
      reason: expect.stringMatching(/emit chooses the id and returns it$/),
    });
  });

  it('whose getter throws is refused naming the key, not as unreadable', async () => {
    const hostile = Object.defineProperty({ ...event }, 'extra', {
      enumerable: true,
      get() {
        throw new Error('getter exploded');
      },
    }) as OutboxEventInput;
    expect(await refusal(() => emit(t.db, hostile))).toMatchObject({ field: 'extra' });
  });

  it('set to undefined (an optional field spread from another type) passes', async () => {
    const spread = { ...event, extra: undefined } as OutboxEventInput;
    expect(await refusal(() => emit(t.db, spread))).toBe('accepted');
  });
});

describe('each field of an event is read once', () => {
  it('a tenant answering differently when read again is stored as it was checked', async () => {
    let reads = 0;
    const shifting = {
      ...event,
      get tenantId() {
        reads += 1;
        return reads === 1 ? 'acme' : undefined;
      },
    } as OutboxEventInput;
    const { id } = await emit(t.db, shifting);
    const [row] = await t.db.query<{ tenant_id: string | null }>(
      'SELECT tenant_id FROM outbox_events WHERE id = $1::uuid',
      [id],
    );
    expect({ tenant: row?.tenant_id, reads }).toEqual({ tenant: 'acme', reads: 1 });
  });
});

describe('retryMany uses the ids it checked', () => {
  it('an ids array answering differently when read again is not read again', async () => {
    const missing = randomUUID();
    let reads = 0;
    const shifting = new Proxy([missing], {
      get(target, key, receiver) {
        if (key === '0') return (reads += 1) === 1 ? missing : 'not-a-uuid';
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    expect(await createOutboxAdmin(t.db).retryMany(shifting)).toEqual([
      { id: missing, outcome: 'not_found' },
    ]);
  });
});
