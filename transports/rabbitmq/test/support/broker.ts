/** Test-side access to the real RabbitMQ: a raw channel, broker-side connection kills, cleanup. */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import * as amqp from 'amqplib';
import type { Channel, ChannelModel, GetMessage } from 'amqplib';
import { pause, waitUntil } from '@ferry/testing';
import { RabbitConnection, RabbitPublisher, deleteWorkQueue, type RabbitConsumer } from '@ferry/rabbitmq';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import {
  adminCall,
  closeNamedConnections,
  erlBinary,
  sharedNode,
  unackedByQueue,
} from '../../../../test-support/rabbitErlCall';

const run = promisify(execFile);

/**
 * amqplib's passive declares, taken when this module loads: tests stub Channel.prototype.checkQueue
 * to stage what befalls a consumer's channel (stageStreamCheck, review 130); the probes below must
 * neither trigger nor be counted by such a stub.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const amqplibChannel = (require('amqplib/lib/channel_model') as { Channel: { prototype: Channel } }).Channel;
const passiveQueueDeclare = amqplibChannel.prototype.checkQueue;
const passiveExchangeDeclare = amqplibChannel.prototype.checkExchange;

/**
 * rabbitmqctl `args`. Each call boots an Erlang VM (about 0.9 s of CPU, 2 s of wall time), so a
 * call that follows the previous one within a second (a waitFor poll) first waits, 250 ms the
 * first time and twice as long each time after, up to 2 s: a poll of rabbitmqctl backs off.
 */
async function rabbitmqctl(args: readonly string[]): Promise<string> {
  const sinceLast = Date.now() - ctlPacing.lastEnd;
  if (sinceLast < 1_000) {
    await pause(ctlPacing.gapMs);
    ctlPacing.gapMs = Math.min(ctlPacing.gapMs * 2, 2_000);
  } else ctlPacing.gapMs = 250;
  try {
    return (await run('rabbitmqctl', [...args])).stdout;
  } finally {
    ctlPacing.lastEnd = Date.now();
  }
}
const ctlPacing = { lastEnd: 0, gapMs: 250 };

/** Asks one passive declare on a channel of its own, which a 404 closes: resolves `missing` then. */
type PassiveAsk = <T, M>(ask: (channel: Channel) => Promise<T>, missing: M) => Promise<T | M>;

/** Runs `use` with a connection of its own (closed after) whose every ask has a channel of its own. */
async function passively<R>(use: (ask: PassiveAsk) => Promise<R>): Promise<R> {
  const model = await amqp.connect(AMQP_URL, { clientProperties: { connection_name: uniqueName('probe') } });
  model.on('error', () => undefined);
  try {
    return await use(async (ask, missing) => {
      const channel = await model.createChannel();
      channel.on('error', () => undefined);
      try {
        const answer = await ask(channel);
        await channel.close().catch(() => undefined);
        return answer;
      } catch (error) {
        if ((error as { code?: unknown }).code === 404) return missing;
        throw error;
      }
    });
  } finally {
    await model.close().catch(() => undefined);
  }
}

export const AMQP_URL = process.env.FERRY_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

export function uniqueName(prefix: string): string {
  return `ferry_t_${prefix}_${randomBytes(4).toString('hex')}`;
}

export interface TestBroker {
  readonly channel: Channel;
  /** Every message currently in `queue`, consumed and acked (the queue is emptied). */
  drain(queue: string): Promise<GetMessage[]>;
  readyCount(queue: string): Promise<number>;
  close(): Promise<void>;
}

/** A durable topic exchange and a durable queue bound to it for every routing key ('#'). */
export async function declareRoutedQueue(channel: Channel, exchange: string, queue: string): Promise<void> {
  await channel.assertExchange(exchange, 'topic', { durable: true });
  await channel.assertQueue(queue, { durable: true });
  await channel.bindQueue(queue, exchange, '#');
}

/** Deletes what declareRoutedQueue declared. */
export async function deleteRoutedQueue(channel: Channel, exchange: string, queue: string): Promise<void> {
  await channel.deleteQueue(queue);
  await channel.deleteExchange(exchange);
}

export async function openTestBroker(): Promise<TestBroker> {
  const model: ChannelModel = await amqp.connect(AMQP_URL, {
    clientProperties: { connection_name: uniqueName('admin') },
  });
  const channel = await model.createChannel();
  return {
    channel,
    async drain(queue) {
      const messages: GetMessage[] = [];
      for (;;) {
        const message = await channel.get(queue, { noAck: true });
        if (message === false) return messages;
        messages.push(message);
      }
    },
    async readyCount(queue) {
      return (await channel.checkQueue(queue)).messageCount;
    },
    async close() {
      await model.close().catch(() => undefined);
    },
  };
}

/** The broker's pid of each connection whose connection_name is `name` (rabbitmqctl list_connections). */
async function connectionPidsNamed(name: string): Promise<string[]> {
  const stdout = await rabbitmqctl([
    'list_connections',
    'pid',
    'client_properties',
    '--quiet',
    '--no-table-headers',
  ]);
  return stdout
    .split('\n')
    .filter((line) => line.includes(`{"connection_name","${name}"}`))
    .map((line) => line.split('\t')[0]!);
}

/** How many connections named `name` (connection_name) the broker has open. */
export async function connectionsNamed(name: string): Promise<number> {
  return (await connectionPidsNamed(name)).length;
}

const CLOSE_REASON = 'ferry test: broker-side close';

/**
 * Closes, from the broker side, every connection whose connection_name is `name` (through
 * erl_call where it can, test-support/rabbitErlCall.ts, else rabbitmqctl). Returns how many.
 */
export async function closeConnectionsNamed(name: string): Promise<number> {
  const closed = await closeNamedConnections(name, CLOSE_REASON);
  if (closed !== null) return closed;
  const ours = await connectionPidsNamed(name);
  for (const pid of ours) {
    await rabbitmqctl(['close_connection', pid, CLOSE_REASON]);
  }
  return ours.length;
}

/**
 * Unacknowledged deliveries of `queue`, as the broker counts them (0 when there is no such queue).
 * Only the node tells (a passive declare counts the ready messages only): through erl_call where
 * it can (test-support/rabbitErlCall.ts), else rabbitmqctl; in a condition, ask it last, after what AMQP or the
 * database can answer.
 */
export async function unackedCount(queue: string): Promise<number> {
  const counts = await unackedByQueue();
  if (counts !== null) return counts.get(queue) ?? 0;
  const stdout = await rabbitmqctl([
    'list_queues',
    'name',
    'messages_unacknowledged',
    '--formatter',
    'json',
    '--quiet',
  ]);
  const rows = JSON.parse(stdout) as { name: string; messages_unacknowledged: number }[];
  return rows.find((row) => row.name === queue)?.messages_unacknowledged ?? 0;
}

/**
 * Closes `consumer` and counts what its channel's close returned to `queue`: every delivery it
 * did not ack (the broker requeues a closed channel's unacked deliveries before it answers the
 * close) and any never delivered. 0: everything was acked. A passive declare, where a wait for
 * rabbitmqctl's unacked count to reach 0 cost an Erlang VM (about 1 s of CPU) a poll.
 */
export async function backOnClose(
  consumer: { close(): Promise<void> },
  broker: TestBroker,
  queue: string,
): Promise<number> {
  await consumer.close();
  return broker.readyCount(queue);
}

/** Waits for `check` to return a value other than undefined; a throw counts as "not yet" (the one wait-until of @ferry/testing). */
export async function waitFor<T>(
  description: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 20_000,
): Promise<T> {
  return (await waitUntil(description, check, { timeoutMs, intervalMs: 50 })) as T;
}

/** Why `consumer`'s check() rejects (its message), or undefined while it resolves. */
export function checkFailure(consumer: { check(): Promise<void> }): Promise<string | undefined> {
  return consumer.check().then(
    () => undefined,
    (error: Error) => error.message,
  );
}

/** Consumers attached to `queue` as the broker counts them; undefined while the queue does not exist. */
export async function consumerCount(queue: string): Promise<number | undefined> {
  return (await consumerCounts([queue]))[0];
}

/**
 * The consumers of each of `queues` (undefined: no such queue), each from a passive declare on a
 * channel of its own (one connection for all) (rabbitmqctl's `consumers` count, without booting an Erlang VM).
 * A queue another connection declared exclusive cannot be asked so: that rejects (405).
 */
export async function consumerCounts(queues: readonly string[]): Promise<(number | undefined)[]> {
  return passively(async (ask) => {
    const counts: (number | undefined)[] = [];
    for (const queue of queues) {
      counts.push(
        await ask(
          async (channel) => (await passiveQueueDeclare.call(channel, queue)).consumerCount,
          undefined,
        ),
      );
    }
    return counts;
  });
}

/** Whether `exchange` exists (a passive declare on a channel of its own, which a 404 closes). */
export async function exchangeExists(exchange: string): Promise<boolean> {
  return passively((ask) =>
    ask(async (channel) => {
      await passiveExchangeDeclare.call(channel, exchange);
      return true;
    }, false),
  );
}

/**
 * What the tests against the real inbox share: a migrated database, a broker channel, a
 * connection with a publisher, a work queue named from `prefix` and the consumer a test attaches
 * (`attached`), set up in beforeAll and removed in afterAll (queue and its topology deleted).
 */
export class InboxQueue {
  readonly queue: string;
  database!: TestDatabase;
  broker!: TestBroker;
  connection!: RabbitConnection;
  publisher!: RabbitPublisher;
  /** The consumer the test attached, closed in afterAll. */
  attached: RabbitConsumer | null = null;

  constructor(prefix: string) {
    this.queue = uniqueName(prefix);
    beforeAll(async () => {
      this.database = await createTestDatabase();
      this.broker = await openTestBroker();
      this.connection = new RabbitConnection({ url: AMQP_URL, connectionName: uniqueName(prefix) });
      this.publisher = new RabbitPublisher(this.connection);
    });
    afterAll(async () => {
      await this.attached?.close();
      await this.publisher.close();
      await this.connection.close();
      await deleteWorkQueue(this.broker.channel, { queue: this.queue });
      await this.broker.close();
      await this.database.drop();
    });
  }
}

/**
 * An administrative change on the shared node: `call` through erl_call (test-support/rabbitErlCall.ts),
 * else rabbitmqctl `args` (about 1 s of CPU a call).
 */
async function administer(call: string, args: readonly string[]): Promise<void> {
  if ((await adminCall(sharedNode(), call)) === null) await rabbitmqctl(args);
}

const ACTING_USER = erlBinary('ferry-tests');

/** Creates virtual host `name` on the broker, with every permission for guest. */
export async function addVhost(name: string): Promise<void> {
  await administer(`rabbit_vhost:add(${erlBinary(name)}, ${ACTING_USER})`, ['add_vhost', name]);
  await setPermissions(name, 'guest', { configure: '.*', write: '.*', read: '.*' });
}

/** Deletes virtual host `name` (nothing when it does not exist). */
export async function deleteVhost(name: string): Promise<void> {
  await administer(`rabbit_vhost:delete(${erlBinary(name)}, ${ACTING_USER})`, ['delete_vhost', name]).catch(
    () => undefined,
  );
}

/** Creates user `name` with `password` and no tags. */
export async function addUser(name: string, password: string): Promise<void> {
  await administer(
    `rabbit_auth_backend_internal:add_user(${erlBinary(name)}, ${erlBinary(password)}, ${ACTING_USER})`,
    ['add_user', name, password],
  );
}

/** Deletes user `name` (nothing when it does not exist). */
export async function deleteUser(name: string): Promise<void> {
  await administer(`rabbit_auth_backend_internal:delete_user(${erlBinary(name)}, ${ACTING_USER})`, [
    'delete_user',
    name,
  ]).catch(() => undefined);
}

/** Sets `user`'s permissions on virtual host `vhost` (regular expressions over resource names). */
export async function setPermissions(
  vhost: string,
  user: string,
  { configure, write, read }: { configure: string; write: string; read: string },
): Promise<void> {
  const [u, v, c, w, r] = [user, vhost, configure, write, read].map(erlBinary);
  await administer(
    `rabbit_auth_backend_internal:set_permissions(${u}, ${v}, ${c}, ${w}, ${r}, ${ACTING_USER})`,
    ['set_permissions', '-p', vhost, user, configure, write, read],
  );
}

/** Sets `user`'s topic permissions on `exchange` of virtual host `vhost` (routing key expressions). */
export async function setTopicPermissions(
  vhost: string,
  user: string,
  exchange: string,
  { write, read }: { write: string; read: string },
): Promise<void> {
  const [u, v, e, w, r] = [user, vhost, exchange, write, read].map(erlBinary);
  await administer(
    `rabbit_auth_backend_internal:set_topic_permissions(${u}, ${v}, ${e}, ${w}, ${r}, ${ACTING_USER})`,
    ['set_topic_permissions', '-p', vhost, user, exchange, write, read],
  );
}
