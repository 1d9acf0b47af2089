/**
 * amqplib decodes every short string (the properties, the routing key) and every long-string
 * header as UTF-8 lossily: bytes that are not UTF-8 become U+FFFD, and a JS string amqplib
 * encodes is always valid UTF-8. So the `identity` and `tenant` functions can be handed text
 * two different deliveries share: correlationId `key-` ff 61 and `key-` fe 61 both read
 * `key-\uFFFDa`. An identity or tenant such a function returns holding U+FFFD is dead-lettered
 * `invalid_text`, as the AMQP messageId and ferry's headers already were (before, the second
 * delivery was committed as a duplicate of the first: lost). The bytes are put on the wire by
 * rewriting what amqplib writes to its socket (same length, so every frame size holds).
 */
import type { Socket } from 'node:net';
import { FERRY_HEADERS } from '@ferry/core';
import {
  RabbitConnection,
  attachRabbitConsumer,
  deleteWorkQueue,
  type RabbitConsumer,
  type RabbitConsumerOptions,
} from '@ferry/rabbitmq';
import * as amqp from 'amqplib';
import type { ChannelModel, GetMessage, Options } from 'amqplib';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { PgTestAcceptor } from '../../../test-support/pgAcceptor';
import {
  AMQP_URL,
  openTestBroker,
  unackedCount,
  uniqueName,
  waitFor,
  type TestBroker,
} from './support/broker';

/** Placeholders amqplib encodes (3 bytes each after the prefix) and the raw bytes sent instead. */
const RAW: ReadonlyArray<readonly [Buffer, Buffer]> = [
  [Buffer.from('key-\u00e9'), Buffer.from([...Buffer.from('key-'), 0xff, 0x61])],
  [Buffer.from('key-\u00e8'), Buffer.from([...Buffer.from('key-'), 0xfe, 0x61])],
];

function rewrite(chunk: Buffer): Buffer {
  let out = chunk;
  for (const [placeholder, raw] of RAW) {
    for (let at = out.indexOf(placeholder); at >= 0; at = out.indexOf(placeholder, at + raw.length)) {
      out = Buffer.concat([out.subarray(0, at), raw, out.subarray(at + raw.length)]);
    }
  }
  return out;
}

let database: TestDatabase;
let broker: TestBroker;
let raw: ChannelModel;

beforeAll(async () => {
  database = await createTestDatabase({ migrate: false });
  broker = await openTestBroker();
  raw = await amqp.connect(AMQP_URL, { clientProperties: { connection_name: uniqueName('raw') } });
  const socket = (raw as unknown as { connection: { stream: Socket } }).connection.stream;
  const write = socket.write.bind(socket) as (chunk: unknown, ...rest: unknown[]) => boolean;
  socket.write = ((chunk: unknown, ...rest: unknown[]) =>
    write(Buffer.isBuffer(chunk) ? rewrite(chunk) : chunk, ...rest)) as Socket['write'];
});

afterAll(async () => {
  await raw.close().catch(() => undefined);
  await broker.close();
  await database.drop();
});

async function withConsumer(
  options: Partial<RabbitConsumerOptions>,
  body: (queue: string, inner: PgTestAcceptor) => Promise<void>,
): Promise<void> {
  await database.db.execute('DROP TABLE IF EXISTS test_inbox');
  const inner = await PgTestAcceptor.create(database.db);
  const queue = uniqueName('lossy');
  const connection = new RabbitConnection({ url: AMQP_URL, connectionName: uniqueName('lossy') });
  let consumer: RabbitConsumer | null = null;
  try {
    consumer = attachRabbitConsumer(inner, {
      connection,
      queue,
      consumer: 'billing',
      logger: pino({ level: 'silent' }),
      ...options,
    });
    await consumer.ready({ timeoutMs: 20_000 });
    await body(queue, inner);
  } finally {
    const tiers = consumer?.names.retryTiersMs;
    await consumer?.close();
    await connection.close();
    await deleteWorkQueue(broker.channel, { queue, ...(tiers ? { retryTiersMs: tiers } : {}) });
  }
}

async function sendRaw(queue: string, options: Options.Publish): Promise<void> {
  const channel = await raw.createConfirmChannel();
  channel.sendToQueue(queue, Buffer.from('{"n":1}'), { contentType: 'application/json', ...options });
  await channel.waitForConfirms();
  await channel.close();
}

async function deadLetters(queue: string, count: number): Promise<GetMessage[]> {
  const collected: GetMessage[] = [];
  return waitFor(`${count} dead letters`, async () => {
    collected.push(...(await broker.drain(`${queue}.dlq`)));
    return collected.length >= count ? collected : undefined;
  });
}

const reasons = (letters: readonly GetMessage[]) =>
  letters.map((letter) => letter.properties.headers?.[FERRY_HEADERS.rejectReason]);

test('the rewrite puts bytes that are not UTF-8 on the wire: amqplib hands both as key-\\uFFFDa', async () => {
  const queue = uniqueName('lossy-wire');
  await broker.channel.assertQueue(queue, { durable: false, autoDelete: false });
  try {
    await sendRaw(queue, { correlationId: 'key-\u00e9', headers: { h: 'key-\u00e8' } });
    const [message] = await waitFor('the raw message', async () => {
      const got = await broker.drain(queue);
      return got.length > 0 ? got : undefined;
    });
    expect([message!.properties.correlationId, message!.properties.headers?.h]).toEqual([
      'key-\uFFFDa',
      'key-\uFFFDa',
    ]);
  } finally {
    await broker.channel.deleteQueue(queue);
  }
});

test('an identity read from a correlationId that was not UTF-8 is dead-lettered, not merged into one id', async () => {
  await withConsumer(
    { identity: (message) => (message.properties.correlationId as string | undefined) ?? null },
    async (queue, inner) => {
      await sendRaw(queue, { correlationId: 'key-\u00e9' });
      await sendRaw(queue, { correlationId: 'key-\u00e8' });
      const dead = await deadLetters(queue, 2);
      expect(reasons(dead)).toEqual(['invalid_text', 'invalid_text']);
      expect(String(dead[0]!.properties.headers?.['x-ferry-reject-detail'])).toContain('U+FFFD');
      await waitFor('nothing unacked', async () => ((await unackedCount(queue)) === 0 ? true : undefined));
      expect(await inner.storedIds()).toEqual([]);
    },
  );
});

test('a tenant read from a long-string header that was not UTF-8 is dead-lettered, not merged into one tenant', async () => {
  await withConsumer(
    { tenant: (message) => (message.properties.headers?.['x-customer'] as string | undefined) ?? null },
    async (queue, inner) => {
      await sendRaw(queue, { messageId: 'm1', headers: { 'x-customer': 'key-\u00e9' } });
      await sendRaw(queue, { messageId: 'm2', headers: { 'x-customer': 'key-\u00e8' } });
      const dead = await deadLetters(queue, 2);
      expect(reasons(dead)).toEqual(['invalid_text', 'invalid_text']);
      await waitFor('nothing unacked', async () => ((await unackedCount(queue)) === 0 ? true : undefined));
      expect(await inner.storedIds()).toEqual([]);
    },
  );
});
