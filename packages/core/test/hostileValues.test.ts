/**
 * Values an application can hand to emit() and acceptMany() that cannot be read without
 * throwing: a getter that throws, a Proxy whose traps throw. Each is refused with ferry's typed
 * validation error (emit) or an `invalid` result for that input alone (acceptMany), never the
 * application's raw error escaping from inside ferry, and never failing the batch's neighbours.
 */
import { FerryValidationError, createInbox, emit, type InboxAcceptInput } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const throwingGetter = () => ({
  get total(): number {
    throw new Error('getter exploded');
  },
});
const throwingProxy = () =>
  new Proxy(
    {},
    {
      getPrototypeOf() {
        throw new Error('trap exploded');
      },
      ownKeys() {
        throw new Error('trap exploded');
      },
    },
  );

describe.each([
  ['a getter that throws', throwingGetter],
  ['a Proxy whose traps throw', throwingProxy],
])('%s', (_what, hostile) => {
  test('emit() refuses the payload with FerryValidationError and inserts nothing', async () => {
    const before = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox_events');
    const error = await emit(t.db, { type: 'x', payload: { nested: hostile() } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FerryValidationError);
    expect((error as Error).message).toMatch(/payload.*could not be read/);
    const top = await emit(t.db, { type: 'x', payload: hostile() as Record<string, unknown> }).catch(
      (e: unknown) => e,
    );
    expect(top).toBeInstanceOf(FerryValidationError);
    expect(await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox_events')).toEqual(before);
  });

  test('acceptMany() answers that input invalid and accepts its neighbours', async () => {
    const inbox = createInbox(t.prisma, { global: 'shared' });
    const input = (messageId: string, payload: unknown): InboxAcceptInput => ({
      consumer: 'c',
      messageId,
      tenantId: null,
      payload: payload as Record<string, unknown>,
    });
    const id = `${Math.random()}`;
    const results = await inbox.acceptMany([
      input(`a-${id}`, { n: 1 }),
      input(`b-${id}`, hostile()),
      input(`c-${id}`, { nested: hostile() }),
      input(`d-${id}`, { n: 4 }),
    ]);
    await inbox.close();
    expect(results.map((result) => result.kind)).toEqual(['accepted', 'invalid', 'invalid', 'accepted']);
  });
});
