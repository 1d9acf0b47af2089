/**
 * Review finding (failed first), review 14 of f35d489 (a node under a resource alarm is an
 * outage): the publish path gives up at its deadline, but shutting down did not. A node under a
 * memory/disk alarm stops reading every connection that published (connection.blocked), so nothing sent on it is
 * answered, not even a channel.close or connection.close. The publisher's close() awaits both
 * without a deadline: an application (or the relay's shutdown) that closes ferry during an alarm
 * hangs until the operator clears the alarm; a process manager then kills it mid-shutdown. The
 * last case is a publish whose exchange check met the alarm.
 */
import amqp from 'amqplib';
import { RabbitConnection, RabbitPublisher, attachRabbitConsumer } from '@ferry/rabbitmq';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { PgTestAcceptor } from '../../../test-support/pgAcceptor';
import { RabbitNode } from '../../../fault-tests/harness/rabbitmqNode';
import { neverAborted, outboxMessage } from './support/messages';

jest.setTimeout(180_000);

let node: RabbitNode;
let database: TestDatabase;
const queue = 'review14.alarm';

beforeAll(async () => {
  node = await RabbitNode.create();
  await node.start();
  database = await createTestDatabase({ migrate: false });
  const admin = await amqp.connect(node.url);
  const channel = await admin.createChannel();
  await channel.assertQueue(queue, { durable: true });
  await channel.assertExchange('review14.x', 'topic', { durable: true });
  await channel.bindQueue(queue, 'review14.x', '#');
  await admin.close();
});

/** Whether a test raised the alarm and has not cleared it (each rabbitmqctl call takes seconds). */
let alarmRaised = false;

async function memoryAlarm(raised: boolean): Promise<void> {
  if (raised) alarmRaised = true; // cleared afterwards even if the raise fails half-way
  await node.memoryAlarm(raised);
  alarmRaised = raised;
}

afterAll(async () => {
  if (alarmRaised) await node?.memoryAlarm(false).catch(() => undefined);
  await node?.dispose();
  await database?.drop();
});

afterEach(async () => {
  if (alarmRaised) await memoryAlarm(false);
});

const settlesWithin = async (work: Promise<unknown>, ms: number): Promise<'settled' | 'still waiting'> => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'still waiting'>((resolve) => {
    timer = setTimeout(() => resolve('still waiting'), ms);
  });
  const result = await Promise.race([
    work.then(
      () => 'settled' as const,
      () => 'settled' as const,
    ),
    timeout,
  ]);
  clearTimeout(timer);
  return result;
};

async function blockedPublisher(
  owned: boolean,
): Promise<{ publisher: RabbitPublisher; connection: RabbitConnection | null }> {
  const connection = owned ? null : new RabbitConnection({ url: node.url, connectionName: 'review14-alarm' });
  const publisher = new RabbitPublisher(connection ?? node.url, {
    defaultDestination: `/${queue}`,
    confirmTimeoutMs: 1_000,
  });
  const [before] = await publisher.publish([outboxMessage({ payload: { n: 'before' } })], neverAborted());
  expect(before?.status).toBe('sent');
  await memoryAlarm(true);
  const [during] = await publisher.publish([outboxMessage({ payload: { n: 'during' } })], neverAborted());
  expect(during?.status).toBe('unavailable');
  return { publisher, connection };
}

test('publisher.close() (own connection) during a resource alarm returns within seconds', async () => {
  const { publisher } = await blockedPublisher(true);
  const closing = publisher.close();
  expect(await settlesWithin(closing, 10_000)).toBe('settled');
  await memoryAlarm(false);
  await closing;
});

test('publisher.close() then connection.close() during a resource alarm return within seconds', async () => {
  const { publisher, connection } = await blockedPublisher(false);
  const closing = publisher.close().then(() => connection!.close());
  expect(await settlesWithin(closing, 10_000)).toBe('settled');
  await memoryAlarm(false);
  await closing;
});

test('consumer.close() on the connection a publisher shares returns within seconds during a resource alarm', async () => {
  // One RabbitConnection for the application's publisher and consumer (what `connection:`
  // invites). The alarm blocks the connection once the publisher publishes on it; the consumer's
  // close (basic.cancel, channel.close) is then never answered either.
  await database.db.execute('DROP TABLE IF EXISTS test_inbox');
  const acceptor = await PgTestAcceptor.create(database.db);
  const connection = new RabbitConnection({ url: node.url, connectionName: 'review14-shared' });
  const consumer = attachRabbitConsumer(acceptor, {
    connection,
    queue: 'review14.work',
    consumer: 'billing',
    retryBackoff: { initialMs: 100, maxMs: 200 },
  });
  await consumer.ready();
  const publisher = new RabbitPublisher(connection, {
    defaultDestination: `/${queue}`,
    confirmTimeoutMs: 1_000,
  });
  await memoryAlarm(true);
  const [during] = await publisher.publish([outboxMessage({ payload: { n: 'during' } })], neverAborted());
  expect(during?.status).toBe('unavailable');
  const closing = consumer.close();
  expect(await settlesWithin(closing, 10_000)).toBe('settled');
  await memoryAlarm(false);
  await closing;
  await publisher.close();
  await connection.close();
});

test('a consumer (its own connection, as in the README) whose dead-letter copy meets a resource alarm still closes within seconds', async () => {
  // No publisher at all: the consumer's own dead-letter copy of an invalid delivery is a publish
  // on its connection, which the alarm then blocks. The SIGTERM path of the README
  // (consumer.close(), then connection.close()) waits for the broker's answers with no deadline.
  await database.db.execute('DROP TABLE IF EXISTS test_inbox');
  const acceptor = await PgTestAcceptor.create(database.db);
  const work = 'review14.consumer-only';
  const options = {
    queue: work,
    consumer: 'billing',
    retryBackoff: { initialMs: 100, maxMs: 200 },
    confirmTimeoutMs: 1_000,
  };
  const first = new RabbitConnection({ url: node.url, connectionName: 'review14-consumer-declare' });
  const declaring = attachRabbitConsumer(acceptor, { connection: first, ...options });
  await declaring.ready();
  await declaring.close();
  await first.close();
  const admin = await amqp.connect(node.url);
  const raw = await admin.createChannel();
  raw.sendToQueue(work, Buffer.from('{not json'), { messageId: 'bad-1', contentType: 'application/json' });
  await raw.close();
  await admin.close();
  await memoryAlarm(true);
  const connection = new RabbitConnection({ url: node.url, connectionName: 'review14-consumer-only' });
  const consumer = attachRabbitConsumer(acceptor, { connection, ...options });
  await consumer.ready();
  await new Promise((resolve) => setTimeout(resolve, 3_000)); // the copy is sent and goes unconfirmed
  const closing = consumer.close().then(() => connection.close());
  expect(await settlesWithin(closing, 10_000)).toBe('settled');
  await memoryAlarm(false);
  await closing;
});

test('a publish to an exchange not checked yet settles by its deadline when the alarm blocks the connection during the check', async () => {
  // The exchange check (missingExchanges) races the channel open and checkExchange with the
  // publish's deadline, but then awaits channel.close() with none. A concurrent publish blocks
  // the connection between the check channel's open and its close: the publish never returns.
  const publisher = new RabbitPublisher(node.url, { confirmTimeoutMs: 1_000 });
  const [before] = await publisher.publish([outboxMessage({ destination: `/${queue}` })], neverAborted());
  expect(before?.status).toBe('sent');
  await memoryAlarm(true);
  const checked = publisher.publish([outboxMessage({ destination: 'review14.x/k' })], neverAborted());
  const blocking = publisher.publish([outboxMessage({ destination: `/${queue}` })], neverAborted());
  expect(await settlesWithin(blocking, 10_000)).toBe('settled'); // unavailable after 1 s: holds
  // Received: still waiting; it settles only once the alarm clears (minutes to hours in production).
  expect(await settlesWithin(checked, 10_000)).toBe('settled');
  await memoryAlarm(false);
  await Promise.all([checked, blocking]);
  await publisher.close();
});
