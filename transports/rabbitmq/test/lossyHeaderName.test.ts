/**
 * Review finding (failed first on main). copyOptions promises copies amqplib can always encode (an encode
 * error inside ConfirmChannel.publish credits every later confirm on the channel to the wrong
 * publish), and shortens short-string *properties* that amqplib's lossy UTF-8 decoding grew past
 * 255 bytes. Header *names* are short strings too and grow the same way: a name of 100 bytes that
 * are not UTF-8 (another client may send any bytes) is decoded as 100 U+FFFD, 300 bytes, and
 * copyHeaders keeps it; amqplib's encodeTable then throws (writeUInt8 of 300) while publishing
 * the dead-letter copy, after queuing its confirm callback (copyOptions' own warning: later
 * confirms on that channel are credited to the wrong copy). Observed on main: the copy fails and
 * the delivery is rejected to the queue's own DLX, so the dead letter carries no
 * x-ferry-reject-reason / detail (the operator cannot tell why). Such a name should be left out of
 * the copy (as x-ferry-dropped-headers does for size).
 * Suggested fix: copyHeaders (and tableBytes for nested tables) drop any name over 255 UTF-8 bytes.
 */
import type { Socket } from 'node:net';
import { FERRY_HEADERS } from '@ferry/core';
import {
  RabbitConnection,
  attachRabbitConsumer,
  deleteWorkQueue,
  type RabbitConsumer,
} from '@ferry/rabbitmq';
import * as amqp from 'amqplib';
import type { ChannelModel, GetMessage } from 'amqplib';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { PgTestAcceptor } from '../../../test-support/pgAcceptor';
import { AMQP_URL, openTestBroker, uniqueName, waitFor, type TestBroker } from './support/broker';

/** 50 x U+00E9 (100 bytes, as amqplib encodes it) and the 100 bytes 0xFF put on the wire instead. */
const PLACEHOLDER = Buffer.from('\u00e9'.repeat(50));
const RAW = Buffer.alloc(100, 0xff);

let database: TestDatabase;
let broker: TestBroker;
let raw: ChannelModel;

beforeAll(async () => {
  database = await createTestDatabase({ migrate: false });
  broker = await openTestBroker();
  raw = await amqp.connect(AMQP_URL, { clientProperties: { connection_name: uniqueName('raw7') } });
  const socket = (raw as unknown as { connection: { stream: Socket } }).connection.stream;
  const write = socket.write.bind(socket) as (chunk: unknown, ...rest: unknown[]) => boolean;
  socket.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (!Buffer.isBuffer(chunk)) return write(chunk, ...rest);
    let out = chunk;
    for (let at = out.indexOf(PLACEHOLDER); at >= 0; at = out.indexOf(PLACEHOLDER, at + RAW.length)) {
      out = Buffer.concat([out.subarray(0, at), RAW, out.subarray(at + RAW.length)]);
    }
    return write(out, ...rest);
  }) as Socket['write'];
});

afterAll(async () => {
  await raw.close().catch(() => undefined);
  await broker.close();
  await database.drop();
});

test('a delivery whose header name decodes to over 255 bytes is dead-lettered, its copy encodable', async () => {
  await database.db.execute('DROP TABLE IF EXISTS test_inbox');
  const inner = await PgTestAcceptor.create(database.db);
  const queue = uniqueName('review7-lossy-name');
  const connection = new RabbitConnection({ url: AMQP_URL, connectionName: uniqueName('review7') });
  let consumer: RabbitConsumer | null = null;
  try {
    consumer = attachRabbitConsumer(inner, {
      connection,
      queue,
      consumer: 'billing',
      logger: pino({ level: 'silent' }),
    });
    await consumer.ready({ timeoutMs: 20_000 });
    const channel = await raw.createConfirmChannel();
    // Not JSON: dead-lettered as unparseable_body through a copy carrying the delivery's headers.
    channel.sendToQueue(queue, Buffer.from('not json'), {
      messageId: 'm-lossy-name',
      headers: { ['\u00e9'.repeat(50)]: 'v' },
    });
    await channel.waitForConfirms();
    await channel.close();
    const letters: GetMessage[] = [];
    const dead = await waitFor(
      'the dead letter',
      async () => {
        letters.push(...(await broker.drain(`${queue}.dlq`)));
        return letters.length > 0 ? letters : undefined;
      },
      20_000,
    ).catch(() => letters);
    // On main the only dead letter is the broker's (x-death), without ferry's reason: the copy threw.
    expect(dead.map((letter) => letter.properties.headers?.[FERRY_HEADERS.rejectReason])).toEqual([
      'unparseable_body',
    ]);
  } finally {
    const tiers = consumer?.names.retryTiersMs;
    await consumer?.close();
    await connection.close();
    await deleteWorkQueue(broker.channel, { queue, ...(tiers ? { retryTiersMs: tiers } : {}) });
  }
}, 60_000);
