/** Test-side access to the real RabbitMQ: a raw channel, broker-side connection kills, cleanup. */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import * as amqp from 'amqplib';
import type { Channel, ChannelModel, GetMessage } from 'amqplib';
import { waitUntil } from '@ferry/testing';
import { RabbitConnection, RabbitPublisher, deleteWorkQueue, type RabbitConsumer } from '@ferry/rabbitmq';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

const run = promisify(execFile);

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

/** Closes, from the broker side, every connection whose connection_name is `name`. Returns how many. */
export async function closeConnectionsNamed(name: string): Promise<number> {
  const { stdout } = await run('rabbitmqctl', [
    'list_connections',
    'pid',
    'client_properties',
    '--quiet',
    '--no-table-headers',
  ]);
  const ours = stdout
    .split('\n')
    .filter((line) => line.includes(`{"connection_name","${name}"}`))
    .map((line) => line.split('\t')[0]!);
  for (const pid of ours) {
    await run('rabbitmqctl', ['close_connection', pid, 'ferry test: broker-side close']);
  }
  return ours.length;
}

/** Unacknowledged deliveries of `queue`, as the broker counts them. */
export async function unackedCount(queue: string): Promise<number> {
  const { stdout } = await run('rabbitmqctl', [
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

/** The consumers of each of `queues` (undefined: no such queue), from one rabbitmqctl call. */
export async function consumerCounts(queues: readonly string[]): Promise<(number | undefined)[]> {
  const { stdout } = await run('rabbitmqctl', [
    'list_queues',
    'name',
    'consumers',
    '--formatter',
    'json',
    '--quiet',
  ]);
  const rows = JSON.parse(stdout) as { name: string; consumers: number }[];
  const byName = new Map(rows.map((row) => [row.name, row.consumers]));
  return queues.map((queue) => byName.get(queue));
}

/** Whether `exchange` exists (asked through rabbitmqctl, so no channel is closed by a 404). */
export async function exchangeExists(exchange: string): Promise<boolean> {
  const { stdout } = await run('rabbitmqctl', ['list_exchanges', 'name', '--formatter', 'json', '--quiet']);
  return (JSON.parse(stdout) as { name: string }[]).some((row) => row.name === exchange);
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

/** Creates virtual host `name` on the broker, with every permission for guest. */
export async function addVhost(name: string): Promise<void> {
  await run('rabbitmqctl', ['add_vhost', name]);
  await run('rabbitmqctl', ['set_permissions', '-p', name, 'guest', '.*', '.*', '.*']);
}

/** Deletes virtual host `name` (nothing when it does not exist). */
export async function deleteVhost(name: string): Promise<void> {
  await run('rabbitmqctl', ['delete_vhost', name]).catch(() => undefined);
}
