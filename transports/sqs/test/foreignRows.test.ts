/**
 * Rows inserted into outbox_events by SQL with what emit() refuses, relayed to SQS (real
 * PostgreSQL, ElasticMQ): an empty destination was taken as a queue named '' (not resolvable,
 * so retried until its attempts ran out), a blank tenant was published and every consumer
 * dead-letters it (tenant_unresolved), a header named as ferry's tenant was left out in silence.
 * Each is FAILED in the first cycle naming the field; its neighbours are in the queue.
 */
import { randomUUID } from 'node:crypto';
import { FERRY_HEADERS, createRelay, emit } from '@ferry/core';
import { SqsPublisher } from '@ferry/sqs';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { useSqsQueuesFixture } from './support/queuesFixture';
import { receiveAtLeast, uniqueName } from './support/sqs';

const sqs = useSqsQueuesFixture();
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

const FOREIGN: readonly (readonly [set: string, field: string])[] = [
  [`destination = ''`, 'destination'],
  [`tenant_id = '  '`, 'tenantId'],
  [`headers = '{"x-ferry-tenant-id": "other"}'`, 'headers.x-ferry-tenant-id'],
];

test('rows emit() would refuse are FAILED in the first cycle naming the field; their neighbours reach the queue', async () => {
  const name = uniqueName('foreign');
  const { queueUrl } = await sqs.queues.declareBare({ name });
  const before = await emit(database.db, { type: 'good', destination: name, payload: { n: 0 } });
  const foreign = new Map<string, string>();
  for (const [set, field] of FOREIGN) {
    const id = randomUUID();
    foreign.set(id, field);
    await database.db.execute(
      `INSERT INTO outbox_events (id, event_type, payload, destination, max_retries)
       VALUES ($1::uuid, 'foreign', '{"n": 1}', $2, 5)`,
      [id, name],
    );
    await database.db.execute(`UPDATE outbox_events SET ${set} WHERE id = $1::uuid`, [id]);
  }
  const after = await emit(database.db, { type: 'good', destination: name, payload: { n: 2 } });
  const publisher = new SqsPublisher(sqs.connection, { defaultDestination: name });
  const relay = createRelay({ db: database.db, publisher, logger: pino({ level: 'silent' }) });
  try {
    await relay.runOnce();
    const rows = await database.db.query<{ id: string; status: string; last_error: string | null }>(
      `SELECT id::text AS id, status, last_error FROM outbox_events ORDER BY seq`,
    );
    expect(
      rows.map((row) => {
        const field = foreign.get(row.id);
        if (field === undefined) return [row.id, row.status, row.last_error];
        return [field, row.status, row.last_error?.startsWith(`not a valid outbox event: ${field}:`)];
      }),
    ).toEqual([
      [before.id, 'SENT', null],
      ...FOREIGN.map(([, field]) => [field, 'FAILED', true]),
      [after.id, 'SENT', null],
    ]);
    const received = await receiveAtLeast(sqs.connection, queueUrl, 2);
    expect(
      received.map((message) => message.MessageAttributes?.[FERRY_HEADERS.messageId]?.StringValue).sort(),
    ).toEqual([before.id, after.id].sort());
  } finally {
    await relay.close();
    await publisher.close();
  }
});
