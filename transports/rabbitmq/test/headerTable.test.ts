/**
 * amqplib encodes a message's header table in a scratch buffer of 65,536 bytes and throws when
 * it does not fit (and, when the last value crosses the end, writes it cut short). emit() takes
 * up to 1 MiB of headers when `limits.maxHeaderBytes` says so, and a row inserted by SQL may hold
 * as much. Such an event must be refused alone: before, the publish threw, the channel was
 * dropped and every later message of the batch went unpublished ("an earlier publish in the
 * batch failed"), waiting for another cycle.
 */
import { createEmitter, createRelay, emitMany } from '@ferry/core';
import { RabbitConnection, RabbitPublisher } from '@ferry/rabbitmq';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { AMQP_URL, openTestBroker, uniqueName, type TestBroker } from './support/broker';

let database: TestDatabase;
let broker: TestBroker;

beforeAll(async () => {
  database = await createTestDatabase();
  broker = await openTestBroker();
});

afterAll(async () => {
  await broker.close();
  await database.drop();
});

test('an event whose header table is over 64 KiB is FAILED alone; the rest of its batch is sent in the same cycle', async () => {
  const queue = uniqueName('header_table');
  await broker.channel.assertQueue(queue, { durable: false, autoDelete: false });
  const wide = createEmitter({ limits: { maxHeaderBytes: 200_000 } });
  const destination = `/${queue}`;
  const { ids: before } = await emitMany(database.db, [
    { type: 'good', destination, payload: { n: 0 } },
    { type: 'good', destination, payload: { n: 1 } },
  ]);
  const { id: big } = await wide.emit(database.db, {
    type: 'big-headers',
    destination,
    payload: { n: 2 },
    headers: { 'x-blob': 'v'.repeat(100_000) },
  });
  // 65,500 bytes of value: over the table's 65,536 only with the names and ferry's own headers.
  const { id: edge } = await wide.emit(database.db, {
    type: 'edge-headers',
    destination,
    payload: { n: 3 },
    headers: { 'x-blob': 'v'.repeat(65_500) },
  });
  const { ids: after } = await wide.emitMany(database.db, [
    { type: 'good', destination, payload: { n: 4 } },
    { type: 'good', destination, payload: { n: 5 }, headers: { 'x-fits': 'v'.repeat(60_000) } },
  ]);
  const connection = new RabbitConnection({ url: AMQP_URL, connectionName: uniqueName('header_table') });
  const publisher = new RabbitPublisher(connection, { confirmTimeoutMs: 5_000 });
  const relay = createRelay({ db: database.db, publisher, logger: pino({ level: 'silent' }) });
  try {
    await relay.runOnce();
    const rows = await database.db.query<{ id: string; status: string; last_error: string | null }>(
      `SELECT id::text AS id, status, left(last_error, 200) AS last_error FROM outbox_events ORDER BY seq`,
    );
    expect(rows.map((row) => [row.id, row.status])).toEqual([
      [before[0], 'SENT'],
      [before[1], 'SENT'],
      [big, 'FAILED'],
      [edge, 'FAILED'],
      [after[0], 'SENT'],
      [after[1], 'SENT'],
    ]);
    for (const row of rows.filter((r) => r.status === 'FAILED'))
      expect(row.last_error).toMatch(/^the header table is \d+ bytes; amqplib encodes at most 65536/);
    const delivered = await broker.drain(queue);
    expect(delivered.map((message) => message.properties.messageId as string)).toEqual([...before, ...after]);
  } finally {
    await relay.close();
    await publisher.close();
    await connection.close();
    await broker.channel.deleteQueue(queue);
  }
});
