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
import { drainAll, emitAndRelay, relay } from './helpers';

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
  // Read exactly, but integers emit() refuses (beyond 2^53-1: a consumer dead-letters them).
  ['payload-2^53', '{"id": 9007199254740992}', '{}', 'payload'],
  ['payload-round-integer', '{"id": [12345678901234567000]}', '{}', 'payload'],
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

/**
 * Columns besides payload and headers holding what emit() refuses (its own checks, at the
 * widest limits an emitter may be given, ENVELOPE_LIMIT_BOUNDS): each row FAILED at once with
 * the field emit names, never published. Before, they were published as they were: a type of
 * only spaces, an empty destination (SQS: a queue named '' retried until its attempts ran out),
 * a tenant a ferry consumer dead-letters (tenant_unresolved), a header named as ferry's own, ...
 */
const COLUMNS: readonly (readonly [name: string, set: string, field: string])[] = [
  ['type-blank', `event_type = ' '`, 'type'],
  ['destination-empty', `destination = ''`, 'destination'],
  ['destination-long', `destination = repeat('d', 513)`, 'destination'],
  ['ordering-key-empty', `ordering_key = ''`, 'orderingKey'],
  ['tenant-empty', `tenant_id = ''`, 'tenantId'],
  ['tenant-blank', `tenant_id = '   '`, 'tenantId'],
  ['tenant-control', `tenant_id = E'acme\\tcorp'`, 'tenantId'],
  ['tenant-invisible', `tenant_id = E'\\u200B'`, 'tenantId'],
  // Longer than IDENTIFIER_LIMITS.tenantId (255), whatever maxIdLength: every ferry inbox refuses it.
  ['tenant-long', `tenant_id = repeat('t', 256)`, 'tenantId'],
  ['correlation-empty', `correlation_id = ''`, 'correlationId'],
  ['causation-long', `causation_id = repeat('c', 513)`, 'causationId'],
  // Trace context no W3C reader takes is left out of the publish, not a fault: review138-traceContextUpgrade.
  ['header-reserved', `headers = '{"x-ferry-tenant-id": "other"}'`, 'headers.x-ferry-tenant-id'],
  ['header-reserved-case', `headers = '{"X-Ferry-Message-Id": "forged"}'`, 'headers.X-Ferry-Message-Id'],
  ['header-traceparent', `headers = '{"traceparent": "00-x"}'`, 'headers.traceparent'],
  ['header-empty-name', `headers = '{"": "v"}'`, 'headers'],
  [
    'headers-too-many',
    `headers = (SELECT jsonb_object_agg('h' || i, 'v') FROM generate_series(1, 1001) i)`,
    'headers',
  ],
  ['headers-too-large', `headers = jsonb_build_object('h', repeat('v', 1048577))`, 'headers'],
  [
    'payload-too-deep',
    `payload = ('{"a": ' || repeat('[', 260) || repeat(']', 260) || '}')::jsonb`,
    'payload',
  ],
  ['payload-too-large', `payload = jsonb_build_object('s', repeat('p', 16777216))`, 'payload'],
];

test('rows whose other columns hold what emit() refuses are FAILED naming the field, their neighbours sent', async () => {
  await t.db.execute('DELETE FROM outbox_events');
  const before = await emit(t.db, { type: 'good-before', payload: { n: 0 }, tenantId: 'acme' });
  const foreign = new Map<string, string>();
  for (const [type, set, field] of COLUMNS) {
    const id = randomUUID();
    foreign.set(id, field);
    await t.db.execute(
      `INSERT INTO outbox_events (id, event_type, payload, max_retries) VALUES ($1::uuid, $2, '{"n": 1}', 5)`,
      [id, type],
    );
    await t.db.execute(`UPDATE outbox_events SET ${set} WHERE id = $1::uuid`, [id]);
  }
  // At the widest limits an emitter may be configured with, not the defaults: still published.
  const wide = randomUUID();
  await t.db.execute(
    `INSERT INTO outbox_events (id, event_type, payload, headers, destination, max_retries)
     VALUES ($1::uuid, 'good-wide', jsonb_build_object('s', repeat('p', 300000)),
       (SELECT jsonb_object_agg('h' || i, 'v') FROM generate_series(1, 100) i), repeat('d', 512), 5)`,
    [wide],
  );
  const after = await emit(t.db, { type: 'good-after', payload: { n: 1 }, headers: { 'x-app': 'shop' } });
  const publisher = new InMemoryPublisher();
  const r = relay(t.db, publisher, { batchSize: 100 });

  await drainAll(r, t.db);
  await r.close();

  const rows = await t.db.query<{ id: string; status: string; last_error: string | null }>(
    `SELECT id::text AS id, status, left(last_error, 300) AS last_error FROM outbox_events`,
  );
  const refused = rows
    .filter((row) => foreign.has(row.id))
    .map((row) => {
      const field = foreign.get(row.id)!;
      return [field, row.status, row.last_error?.startsWith(`not a valid outbox event: ${field}`)];
    });
  expect(refused.sort()).toEqual([...foreign.values()].map((field) => [field, 'FAILED', true]).sort());
  expect(publisher.delivered.map((message) => message.id).sort()).toEqual([before.id, wide, after.id].sort());
});

test('an event emit() wrote is published as it was, numbers PostgreSQL writes back as long digits included', async () => {
  await t.db.execute('DELETE FROM outbox_events');
  // emit keeps these (JSON.stringify writes 1e+21); jsonb writes them back as 22 and 301 digits.
  const payload = { big: 1e21, huge: 1e300, max: 2 ** 53 - 1, tiny: 5e-324, nested: [{ n: -1e25 }] };
  const { row, delivered } = await emitAndRelay(t.db, { type: 'numbers', payload });

  expect(row).toEqual({ status: 'SENT', last_error: null });
  expect(delivered.map((message) => message.payload)).toEqual([payload]);
});
