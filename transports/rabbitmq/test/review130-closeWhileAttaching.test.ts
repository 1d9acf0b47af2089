/**
 * Review 130: close() of a consumer whose attach is in flight on a connection it shares with
 * another consumer, at each request of the attach: as its channel opens, as it declares its
 * topology, sets its prefetch, opens its copy channel, issues basic.consume and checks its queue.
 * Once close() resolved: the shared connection holds no channel of it (counted on the connection
 * itself, at once), the queue has no consumer, nothing of it is logged or emitted afterwards, the
 * other consumer consumes on, and a new consumer of the same queue attaches and consumes. Real
 * broker, real PostgreSQL.
 */
import type { ChannelModel } from 'amqplib';
import { attachRabbitConsumer, deleteWorkQueue, type RabbitConsumer } from '@ferry/rabbitmq';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { outcomeWithin } from '../../../test-support/deadlines';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';
import { writtenLog } from '../../../test-support/writtenLog';
import { consumerCount, uniqueName, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

failOnUnhandledRejections();
jest.setTimeout(90_000);

/** Long enough for what close() left running to show (a late channel open answered, a retry). */
const WATCHED_AFTER_CLOSE_MS = 1_000;

const f = useConsumerFixture();

/** The channels amqplib holds open on `model` (its channel 0 included). */
function openChannels(model: ChannelModel): number {
  const { channels } = (model as unknown as { connection: { channels: unknown[] } }).connection;
  return channels.filter((entry) => entry !== null && entry !== undefined).length;
}

type Step = readonly [method: string, on: 'model' | 'channel', nth: number];

/** Each request of an attach, in its order (the channel and copy channel opens on the model). */
const STEPS: readonly Step[] = [
  ['createConfirmChannel', 'model', 1],
  ['assertExchange', 'channel', 1],
  ['assertQueue', 'channel', 3],
  ['prefetch', 'channel', 1],
  ['createConfirmChannel', 'model', 2],
  ['consume', 'channel', 1],
  ['checkQueue', 'channel', 1],
];

test('close() at each request of an attach on a shared connection: nothing of it is left or follows, the other consumer and a new one consume', async () => {
  const other = uniqueName('other');
  const neighbour = await f.attach({ queue: other });
  f.consumer = null;
  const model = f.connection.current!;
  // amqplib's ChannelModel and Channel (ConfirmChannel inherits these methods from it).
  const protos = {
    model: Object.getPrototypeOf(model) as Record<string, (...args: unknown[]) => unknown>,
    channel: Object.getPrototypeOf(f.broker.channel) as Record<string, (...args: unknown[]) => unknown>,
  };

  const problems: string[] = [];
  for (const [method, on, nth] of STEPS) {
    const label = `${method} #${nth}`;
    const before = openChannels(model);
    const log = writtenLog();
    const events: string[] = [];
    const run: { consumer: RabbitConsumer | null; closing: Promise<void> | null } = {
      consumer: null,
      closing: null,
    };
    let calls = 0;
    const holder = protos[on];
    const original = holder[method]!;
    const spy = jest.spyOn(holder, method).mockImplementation(function (this: unknown, ...args: unknown[]) {
      const result = original.apply(this, args);
      if (this !== f.broker.channel && run.closing === null && ++calls === nth) {
        // After the request went out; once attachRabbitConsumer returned (the first open is
        // issued inside it).
        queueMicrotask(() => (run.closing = run.consumer!.close()));
      }
      return result;
    });
    try {
      run.consumer = attachRabbitConsumer(f.acceptor, {
        connection: f.connection,
        queue: f.queue,
        consumer: 'billing',
        logger: log.logger,
        observer: (event: TransportConsumerEvent) => void events.push(event.type),
      });
      await waitFor(`close() at ${label}`, () => (run.closing !== null ? true : undefined));
    } finally {
      spy.mockRestore();
    }
    expect(await outcomeWithin(run.closing!, 20_000)).toEqual({ value: undefined });
    const left = openChannels(model);
    const logged = log.text().length;
    const emitted = events.length;
    await new Promise((resolve) => setTimeout(resolve, WATCHED_AFTER_CLOSE_MS));
    if (left !== before)
      problems.push(`${label}: ${left - before} channel(s) left open once close() resolved`);
    if (openChannels(model) !== before)
      problems.push(`${label}: ${openChannels(model) - before} channel(s) later`);
    if (log.text().length !== logged)
      problems.push(`${label}: logged after close(): ${log.text().slice(logged)}`);
    if (events.length !== emitted)
      problems.push(`${label}: events after close(): ${events.slice(emitted).join(',')}`);
    if (events.includes('connected') && events.lastIndexOf('connected') > events.indexOf('disconnected'))
      problems.push(`${label}: connected after closed`);
  }
  expect(problems).toEqual([]);
  expect(await consumerCount(f.queue)).toBe(0);

  // The neighbour consumes on; a new consumer of the queue attaches on the same connection.
  await expect(neighbour.check()).resolves.toBeUndefined();
  f.broker.channel.sendToQueue(other, Buffer.from('{"n":1}'), { messageId: 'to-neighbour' });
  await f.expectStoredOnce(['to-neighbour']);
  await f.attach();
  f.broker.channel.sendToQueue(f.queue, Buffer.from('{"n":2}'), { messageId: 'to-new' });
  await f.expectStoredOnce(['to-neighbour', 'to-new']);
  await neighbour.close();
  await deleteWorkQueue(f.broker.channel, { queue: other, retryTiersMs: neighbour.names.retryTiersMs });
});

test('close() of one consumer while another attaches beside it on the shared connection: the other attaches and consumes, nothing of the closed one is left', async () => {
  // The shared connection up, as the neighbour of the first test had it.
  const warm = await f.attach({ queue: uniqueName('warm') });
  await warm.close();
  f.consumer = null;
  await deleteWorkQueue(f.broker.channel, { queue: warm.names.queue, retryTiersMs: warm.names.retryTiersMs });
  const model = f.connection.current!;
  const other = uniqueName('beside');
  const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
  for (const turns of [0, 1, 2, 3, 5, 8]) {
    const before = openChannels(model);
    const options = { connection: f.connection, consumer: 'billing' } as const;
    const beside = attachRabbitConsumer(f.acceptor, { ...options, queue: other });
    const closed = attachRabbitConsumer(f.acceptor, { ...options, queue: f.queue });
    for (let t = 0; t < turns; t += 1) await turn();
    expect(await outcomeWithin(closed.close(), 20_000)).toEqual({ value: undefined });
    await beside.ready({ timeoutMs: 20_000 });
    await expect(beside.check()).resolves.toBeUndefined();
    // The beside consumer's channel and copy channel, nothing of the closed one.
    expect({ turns, channels: openChannels(model) - before }).toEqual({ turns, channels: 2 });
    f.broker.channel.sendToQueue(other, Buffer.from('{"n":1}'), { messageId: `beside-${turns}` });
    await waitFor(`beside-${turns} stored`, async () =>
      (await f.acceptor.storedIds()).includes(`beside-${turns}`) ? true : undefined,
    );
    await beside.close();
  }
  // Declared or not (closed before its declare), the queue has no consumer.
  expect(await consumerCount(f.queue)).toBeFalsy();
  await deleteWorkQueue(f.broker.channel, { queue: other });
});
