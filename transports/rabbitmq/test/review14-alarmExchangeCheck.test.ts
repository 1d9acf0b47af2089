/**
 * Review finding (failed first), review 14 of f35d489 (a node under a resource alarm is an
 * outage; each publish stops waiting at its deadline): one wait of the publish path still had no
 * deadline. The check of an
 * exchange not seen yet (publisher.ts missingExchanges) races the check channel's open and
 * checkExchange with the publish's deadline, then awaits channel.close() with none. A node under
 * a memory/disk alarm stops reading a connection once it publishes, so when a concurrent publish
 * blocks the connection mid-check that close is never answered: the publish returns only when
 * the alarm clears, far past confirmTimeoutMs (the relay waits for it until lease.duration, then
 * spends an attempt on the whole batch).
 */
import amqp from 'amqplib';
import { RabbitPublisher } from '@ferry/rabbitmq';
import { RabbitNode } from '../../../fault-tests/harness/rabbitmqNode';
import { neverAborted, outboxMessage } from './support/messages';

jest.setTimeout(180_000);

let node: RabbitNode;
const queue = 'review14.alarm';

beforeAll(async () => {
  node = await RabbitNode.create();
  await node.start();
  const admin = await amqp.connect(node.url);
  const channel = await admin.createChannel();
  await channel.assertQueue(queue, { durable: true });
  await channel.assertExchange('review14.x', 'topic', { durable: true });
  await channel.bindQueue(queue, 'review14.x', '#');
  await admin.close();
});

afterAll(async () => {
  await node?.memoryAlarm(false).catch(() => undefined);
  await node?.dispose();
});

afterEach(async () => {
  await node.memoryAlarm(false);
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

test('a publish to an exchange not checked yet settles by its deadline when the alarm blocks the connection during the check', async () => {
  // The exchange check (missingExchanges) races the channel open and checkExchange with the
  // publish's deadline, but then awaits channel.close() with none. A concurrent publish blocks
  // the connection between the check channel's open and its close: the publish never returns.
  const publisher = new RabbitPublisher(node.url, { confirmTimeoutMs: 1_000 });
  const [before] = await publisher.publish([outboxMessage({ destination: `/${queue}` })], neverAborted());
  expect(before?.status).toBe('sent');
  await node.memoryAlarm(true);
  const checked = publisher.publish([outboxMessage({ destination: 'review14.x/k' })], neverAborted());
  const blocking = publisher.publish([outboxMessage({ destination: `/${queue}` })], neverAborted());
  expect(await settlesWithin(blocking, 10_000)).toBe('settled'); // unavailable after 1 s: holds
  // Received: still waiting; it settles only once the alarm clears (minutes to hours in production).
  expect(await settlesWithin(checked, 10_000)).toBe('settled');
  await node.memoryAlarm(false);
  await Promise.all([checked, blocking]);
  await publisher.close();
});
