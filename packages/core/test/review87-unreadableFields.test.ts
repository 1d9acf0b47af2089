/**
 * Review 87 (outbox envelope: a field whose value throws as it is read), failing on main.
 *
 * What I did: emit events whose `headers`, `tenantId` or `payload` cannot be read: a header
 * getter that throws, a headers Proxy whose ownKeys trap throws, a `tenantId` getter that throws
 * (a request-scoped tenant read outside its scope), a revoked Proxy as the payload, a payload
 * Proxy whose getPrototypeOf trap throws.
 *
 * What happened: each is refused with FerryValidationError, but on field `event` ("event could not
 * be read: …"): the generic guard of validateEnvelope caught the raw error, where a value inside
 * the payload that throws is named by its path (`payload.a`). The application is told its event
 * is unreadable, not which field.
 *
 * What should happen: the field whose value could not be read is named (`headers`, `tenantId`,
 * `payload`), nothing inserted.
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

const revoked = (): object => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
};

const cases: Array<[string, string, Record<string, unknown>]> = [
  [
    'a header getter that throws',
    'headers',
    {
      headers: {
        get region(): string {
          throw new Error('not loaded');
        },
      },
    },
  ],
  [
    'a headers Proxy whose ownKeys throws',
    'headers',
    {
      headers: new Proxy(
        {},
        {
          ownKeys: () => {
            throw new Error('no keys');
          },
        },
      ),
    },
  ],
  [
    'a tenantId getter that throws',
    'tenantId',
    {
      get tenantId(): string {
        throw new Error('no tenant in scope');
      },
    },
  ],
  ['a revoked Proxy as the payload', 'payload', { payload: revoked() }],
  [
    'a payload Proxy whose getPrototypeOf throws',
    'payload',
    {
      payload: new Proxy(
        {},
        {
          getPrototypeOf: () => {
            throw new Error('no prototype');
          },
        },
      ),
    },
  ],
];

describe('review87: a field that cannot be read', () => {
  it.each(cases)('%s is refused on %s, nothing inserted', async (_, field, fields) => {
    // Getters copied as getters (a spread would call them here).
    const event = Object.defineProperties(
      { type: 'order.created', payload: {} },
      Object.getOwnPropertyDescriptors(fields),
    ) as unknown as OutboxEventInput;
    const refused = await emit(t.db, event).then(
      () => 'inserted',
      (e: unknown) => (e instanceof FerryValidationError ? e.field : String(e)),
    );
    // On main: 'event'.
    expect(refused).toBe(field);
    const [row] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox_events`);
    expect(row?.n).toBe(0);
  });
});
