/**
 * Record batches compressed by a client ferry did not write: the Java producer (kafka-clients of
 * the project's Kafka) with each codec Kafka defines, ferry's headers included, read by
 * attachKafkaConsumer into the real inbox of @ferry/core. Every record is stored, and a record
 * published after them is stored too: no codec stalls the partition.
 */
import { FERRY_HEADERS, INBOX_TABLE, Inbox } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { CompressionCodecs, CompressionTypes } from 'kafkajs';
import {
  attachKafkaConsumer,
  deleteGroups,
  deleteTopics,
  ensureTopics,
  UNDECODABLE_BATCH,
  UndecodableBatchError,
} from '../src';
import { registerKafkajsCodecs } from '../src/client/kafkajsCodecs';
import { platformaticKafka } from '../src/client/platformatic';
import { kafkaClient } from './clients';
import { produceWithJava, type Codec, type ForeignRecord } from './javaProducer';
import {
  captureLogger,
  fastGroup,
  InboxTopic,
  outboxMessage,
  uniqueName,
  waitFor,
  waitFullyCommitted,
} from './support';

const setup = new InboxTopic('codecs', 1);
const { connection, topic, groupId } = setup;

const CODECS: readonly Codec[] = ['gzip', 'snappy', 'lz4', 'zstd', 'none'];
const PER_CODEC = 3;

/** `PER_CODEC` records of `codec` in one batch, ids `<codec>-<i>`, with ferry's message id and tenant headers. */
function records(codec: Codec): ForeignRecord[] {
  return Array.from({ length: PER_CODEC }, (_, index) => ({
    mode: 'batched',
    codec,
    key: `${codec}-${index}`,
    value: JSON.stringify({ codec, n: index }),
    headers: [
      [FERRY_HEADERS.messageId, `${codec}-${index}`],
      [FERRY_HEADERS.tenantId, 'tenant-j'],
    ],
  }));
}

/** Produces each codec's records with the Java client in one run, one batch per codec, in order. */
async function produceCompressed(topic: string, codecs: readonly Codec[]): Promise<void> {
  await produceWithJava(topic, codecs.flatMap(records));
}

test('stores every record of batches compressed with gzip, snappy, lz4, zstd and none by the Java client, and the record after them', async () => {
  await produceCompressed(topic, CODECS);
  const consumer = attachKafkaConsumer(new Inbox(setup.database.prisma), {
    connection,
    topic,
    groupId,
    consumer: 'codecs',
    ...fastGroup,
    maxWaitTimeMs: 200,
  });
  setup.attached = consumer;
  await consumer.ready();
  const after = outboxMessage({ tenantId: 'tenant-j', payload: { after: true } });
  const [outcome] = await setup.publisher.publish([after], new AbortController().signal);
  expect(outcome?.status).toBe('sent');

  await waitFullyCommitted(connection, groupId, topic);
  const rows = await setup.database.db.query<{ message_id: string; tenant_id: string | null }>(
    `SELECT message_id, tenant_id FROM ${INBOX_TABLE} WHERE consumer = 'codecs'`,
  );
  const stored = rows.map((row) => [row.message_id, row.tenant_id]).sort(([a], [b]) => (a! < b! ? -1 : 1));
  const expected = [
    ...CODECS.flatMap((codec) => Array.from({ length: PER_CODEC }, (_, index) => `${codec}-${index}`)),
    after.id,
  ].sort();
  expect(stored).toEqual(expected.map((id) => [id, 'tenant-j']));
}, 180_000);

test('a batch the client cannot decompress stalls the consumer loudly, each new session later than the last, and nothing is skipped once it can', async () => {
  const stuckTopic = uniqueName('codecs-stuck');
  const stuckGroup = uniqueName('codecs-stuck-group');
  await ensureTopics(connection, [{ topic: stuckTopic }, { topic: `${stuckTopic}.dlq` }]);
  const restore = refuseZstd();
  const events: TransportConsumerEvent[] = [];
  const { logger, lines } = captureLogger();
  const consumer = attachKafkaConsumer(new Inbox(setup.database.prisma), {
    connection,
    topic: stuckTopic,
    groupId: stuckGroup,
    consumer: 'codecs-stuck',
    ...fastGroup,
    maxWaitTimeMs: 200,
    reconnectBackoff: { initialMs: 200, maxMs: 800, multiplier: 2, jitter: 'none' },
    observer: (event) => events.push(event),
    logger,
  });
  try {
    await produceCompressed(stuckTopic, ['gzip', 'zstd', 'lz4']);
    const undecodable = () =>
      events.flatMap((event) =>
        event.type === 'disconnected' && event.error.startsWith(UNDECODABLE_BATCH) ? [event] : [],
      );
    await waitFor(
      () => undecodable().length >= 3,
      () => `disconnected events: ${JSON.stringify(events.filter((event) => event.type === 'disconnected'))}`,
      90_000,
    );
    // Rejoining does not reset the wait: the batch is still there.
    expect(
      undecodable()
        .slice(0, 3)
        .map((event) => event.retryInMs),
    ).toEqual([200, 400, 800]);
    expect(undecodable()[0]!.error).toContain('(zstd)');
    expect(
      lines.some((line) => line.level === 50 && line.msg.includes('cannot read a fetched record batch')),
    ).toBe(true);

    restore();
    await waitFullyCommitted(connection, stuckGroup, stuckTopic, 60_000);
    const rows = await setup.database.db.query<{ message_id: string }>(
      `SELECT message_id FROM ${INBOX_TABLE} WHERE consumer = 'codecs-stuck'`,
    );
    expect(rows.map((row) => row.message_id).sort()).toEqual(
      ['gzip', 'zstd', 'lz4']
        .flatMap((codec) => Array.from({ length: PER_CODEC }, (_, index) => `${codec}-${index}`))
        .sort(),
    );
  } finally {
    restore();
    await consumer.close();
    await deleteGroups(connection, [stuckGroup]);
    await deleteTopics(connection, [stuckTopic, `${stuckTopic}.dlq`]);
  }
}, 180_000);

/**
 * Makes this file's client refuse zstd batches the way a decoder refuses bytes it cannot read
 * (the broker validates batches on append, so a real corrupt batch cannot be produced);
 * returns the function that puts the real decoder back.
 */
function refuseZstd(): () => void {
  const refused = () => new UndecodableBatchError('zstd', new Error('refused by the test'));
  if (kafkaClient() === 'platformatic') {
    const entry = platformaticKafka().compressionsAlgorithms.zstd as {
      decompressSync: (data: Buffer) => Buffer;
    };
    const own = entry.decompressSync;
    entry.decompressSync = () => {
      throw refused();
    };
    return () => void (entry.decompressSync = own);
  }
  registerKafkajsCodecs();
  const codecs = CompressionCodecs as Record<number, () => unknown>;
  const own = codecs[CompressionTypes.ZSTD]!;
  codecs[CompressionTypes.ZSTD] = () => ({
    compress: () => Promise.reject(refused()),
    decompress: () => Promise.reject(refused()),
  });
  return () => void (codecs[CompressionTypes.ZSTD] = own);
}
