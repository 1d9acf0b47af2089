/**
 * Review 82 (outbox envelope), failing on main.
 *
 * What I did: emit an event whose envelope has a misspelt field, as a JavaScript caller, a
 * configuration-driven producer or an object spread from another type writes it:
 * `{ type, payload, tenantID: 'acme' }`, `{ …, orderingkey: 'order-7' }`, `{ …, maxRetry: 20 }`,
 * and `{ …, id }` (an application that believes it chooses the event id, for deduplication).
 *
 * What happened: each is accepted and the field is dropped without a word. The `tenantID` event is
 * written as a GLOBAL event (tenant_id NULL): relayed without `x-ferry-tenant-id`, it lands in the
 * global scope of every consumer that takes global messages (or is dead-lettered
 * FERRY_GLOBAL_SCOPE_REJECTED by those that do not), and no `forTenant('acme')` admin can see or
 * retry it. The `orderingkey` event is unordered; `maxRetry` leaves 5 attempts; the given `id` is
 * replaced by another, so the application's deduplication key is not the message id consumers see.
 *
 * What should happen: every other object ferry takes refuses a key it does not know, "so a
 * misspelt `dryrun: true` never runs the real action" (docs/outbox.md, Admin) and "an unknown key
 * (a misspelt `pollIntervall`) … fail[s] with FerryConfigError" (README, Options). The envelope
 * decides the tenant of a message; a misspelt key there must be refused the same way, with
 * FerryValidationError naming the key (`tenantID: is not a field of an event (known: …): did you
 * mean tenantId?`), nothing inserted.
 *
 * Where: packages/core/src/outbox/envelope/validate.ts (readEnvelope reads the known fields and
 * ignores the rest); knownKeysArgument (optionChecks.ts) already does this for admin arguments.
 */
import { emit, FerryValidationError, type OutboxEventInput } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const misspelt: Array<[string, Record<string, unknown>]> = [
  ['tenantID', { tenantID: 'acme' }],
  ['orderingkey', { orderingkey: 'order-7' }],
  ['maxRetry', { maxRetry: 20 }],
  ['id', { id: '6f1c1c52-7f5b-4c59-9d8f-3c1a2b4e5d60' }],
];

describe('review82: an envelope key emit does not know', () => {
  it.each(misspelt)('%s is refused naming the key, nothing inserted', async (key, extra) => {
    const event = { type: 'order.created', payload: { orderId: 7 }, ...extra } as unknown as OutboxEventInput;
    const result = await emit(t.db, event).then(
      ({ id }) => ({ inserted: id }),
      (e: unknown) => ({ refused: e instanceof FerryValidationError ? e.field : String(e) }),
    );
    // On main: { inserted: <a new id> }, the field dropped (tenantID: a global event).
    expect(result).toEqual({ refused: key });
  });
});
