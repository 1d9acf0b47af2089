/**
 * Rows in outbox_events that emit() would never write (inserted by SQL: another service, a
 * migration from another outbox library, a hand-written fix), with what the table's types allow:
 * a payload that is a JSON string, array, number or null, or holds a number JavaScript cannot
 * keep (12345678901234567891 would be published as 12345678901234567000), headers that are not
 * an object of strings. Each is FAILED at once with a reason naming the field and never reaches the publisher,
 * and the events claimed with it are published: one such row can neither crash the relay's
 * cycle (before: the claim threw, and every row claimed with it stayed PROCESSING for ever) nor
 * fail its neighbours' publish.
 */
import { randomUUID } from 'node:crypto';
import { emit, fromPrisma } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { drainAll, relay } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const FOREIGN: readonly (readonly [type: string, payload: string, headers: string, field: string])[] = [
  ['payload-string', '"text"', '{}', 'payload'],
  ['payload-array', '[1, 2]', '{}', 'payload'],
  ['payload-number', '42', '{}', 'payload'],
  ['payload-null', 'null', '{}', 'payload'],
  ['headers-number', '{"n": 1}', '{"x-count": 5}', 'headers'],
  ['headers-object', '{"n": 1}', '{"x-nested": {"a": "b"}}', 'headers'],
  ['headers-null', '{"n": 1}', '{"x-none": null}', 'headers'],
  ['headers-array', '{"n": 1}', '["x"]', 'headers'],
  ['headers-string', '{"n": 1}', '"x"', 'headers'],
  // Numbers JSON.parse would change: published, the consumer would get another value.
  ['payload-big-integer', '{"id": 12345678901234567891}', '{}', 'payload'],
  ['payload-huge', '{"a": [1, {"x": 1e400}]}', '{}', 'payload'],
  ['payload-tiny', '{"x": 1e-400}', '{}', 'payload'],
  // Kept exactly, but JavaScript writes it as digits beyond 2^53-1: a ferry consumer refuses it.
  ['payload-unsafe-integer', '{"id": 9007199254740994}', '{}', 'payload'],
];

test.each([
  ['node-postgres', () => t.db],
  ['Prisma', () => fromPrisma(t.prisma)],
] as const)(
  'rows emit() would never write are FAILED with a reason and never published; their neighbours are sent (%s)',
  async (_executor, executor) => {
    await t.db.execute('DELETE FROM outbox_events');
    const before = await emit(t.db, { type: 'good-before', payload: { n: 0 } });
    const foreign = new Map<string, string>();
    for (const [type, payload, headers, field] of FOREIGN) {
      const id = randomUUID();
      foreign.set(id, field);
      await t.db.execute(
        `INSERT INTO outbox_events (id, event_type, payload, headers, max_retries)
       VALUES ($1::uuid, $2, $3::jsonb, $4::jsonb, 5)`,
        [id, type, payload, headers],
      );
    }
    const after = await emit(t.db, { type: 'good-after', payload: { n: 1 }, headers: { 'x-app': 'shop' } });
    const publisher = new InMemoryPublisher();
    const r = relay(executor(), publisher);

    await drainAll(r, t.db);
    await r.close();

    expect(publisher.delivered.map((message) => message.id).sort()).toEqual([before.id, after.id].sort());
    const rows = await t.db.query<{
      id: string;
      status: string;
      retry_count: number;
      last_error: string | null;
    }>(`SELECT id::text AS id, status, retry_count, last_error FROM outbox_events`);
    for (const row of rows) {
      const field = foreign.get(row.id);
      if (field === undefined) {
        expect([row.status, row.last_error]).toEqual(['SENT', null]);
        continue;
      }
      expect(row.status).toBe('FAILED');
      expect(row.last_error).toMatch(new RegExp(`^not a valid outbox event: ${field}`));
    }
  },
);
