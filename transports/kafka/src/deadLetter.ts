import { FERRY_HEADERS, type Logger } from '@ferry/core';
import {
  deadLetterIdentity,
  escapeUnshowable,
  hasFerryMessageId,
  withoutOverruledTenant,
  type ConsumerEmit,
  type DeadLetterTenant,
} from '@ferry/core/transport';
import type { ConsumedRecord, DriverProducer, ProducedRecord } from './client/types';
import { classifyKafkaError, type RejectReason } from './errors';
import { producibleHeaders } from './recordHeaders';

/** A record ferry will not accept, and why. */
export interface DeadLetter {
  readonly message: ConsumedRecord;
  /** The record's identity, where it has one. */
  readonly messageId: string | null;
  /** The tenant the copy carries as `x-ferry-tenant-id` (core deadLetterTenant): null none, undefined the record's own. */
  readonly tenant: DeadLetterTenant;
  readonly reason: RejectReason;
  readonly detail: string;
}

/** Set on a dead letter sent without the source record's value and headers, with the reason. */
export const VALUE_DROPPED_HEADER = 'x-ferry-dead-letter-value-dropped';

interface Report {
  readonly emit: ConsumerEmit;
  readonly logger: Logger;
}

interface Source {
  readonly topic: string;
  readonly partition: number;
}

/**
 * Produces rejected records to the dead-letter topic with `acks: -1`: same key, value and headers,
 * plus the reason, a detail, where the record came from, the identity the consumer used when
 * the record had no `x-ferry-message-id`, or an empty one (deadLetterIdentity), and the tenant its
 * tenant source gave it (deadLetterTenant). A record without a key gets
 * `<topic>/<partition>/<offset>` of its source as its key, so a compacted dead-letter topic
 * (which refuses a record without a key) takes it too. Resolves only once the broker took
 * every record; the caller commits after that. When the topic refuses the batch permanently (e.g.
 * MESSAGE_TOO_LARGE), the records go one at a time, and one it refuses even alone goes with its
 * key and ferry's headers only (under the source's `<topic>/<partition>/<offset>` key when the topic refuses that key), so a record the
 * dead-letter topic cannot hold never stalls its partition. A retriable failure is thrown: the chunk is retried.
 */
export async function sendDeadLetters(
  producer: DriverProducer,
  deadLetterTopic: string,
  source: Source,
  deadLetters: readonly DeadLetter[],
  report: Report,
): Promise<void> {
  const records = deadLetters.map((letter) => deadLetterRecord(source, letter));
  try {
    await producer.send([{ topic: deadLetterTopic, records: records.map((record) => record.message) }]);
  } catch (error) {
    if (classifyKafkaError(error).retriable) throw error;
    for (const record of records) await sendAlone(producer, deadLetterTopic, record);
  }
  const { topic, partition } = source;
  for (const { message, messageId, reason, detail } of deadLetters) {
    const offset = message.offset;
    // The detail quotes the record (a JSON.parse error quotes its bytes): a field, escaped, never
    // the log line's text, where a producer's escape sequence or line break drove a terminal or
    // forged a line (review 37), as the RabbitMQ and SQS consumers log it.
    report.logger.warn(
      { topic, partition, offset, reason, deadLetterTopic, detail: escapeUnshowable(detail.slice(0, 300)) },
      `Kafka ${topic}[${partition}] offset ${offset} dead-lettered to ${deadLetterTopic}: ${reason}`,
    );
    report.emit({ type: 'dead-lettered', reason, messageId }, topic);
  }
}

async function sendAlone(producer: DriverProducer, topic: string, record: DeadLetterRecord): Promise<void> {
  try {
    await producer.send([{ topic, records: [record.message] }]);
  } catch (error) {
    const classified = classifyKafkaError(error);
    if (classified.retriable) throw error;
    const headers = { ...record.ferryHeaders, [VALUE_DROPPED_HEADER]: classified.message.slice(0, 300) };
    try {
      await producer.send([{ topic, records: [{ key: record.message.key, value: null, headers }] }]);
    } catch (keyError) {
      // The key alone is too much for the topic (a hostile producer chose it): ferry's headers
      // only, under the key that names where the record came from.
      if (classifyKafkaError(keyError).retriable || record.message.key === record.sourceKey) throw keyError;
      await producer.send([{ topic, records: [{ key: record.sourceKey, value: null, headers }] }]);
    }
  }
}

interface DeadLetterRecord {
  readonly message: ProducedRecord;
  /** The headers ferry adds, without the source record's own. */
  readonly ferryHeaders: Readonly<Record<string, string>>;
  /** `<topic>/<partition>/<offset>` of the source record: the key of a copy without the source's. */
  readonly sourceKey: string;
}

function deadLetterRecord(
  source: Source,
  { message, messageId, tenant, reason, detail }: DeadLetter,
): DeadLetterRecord {
  // A record known by what its copy does not keep (topic-partition-offset, the extractor's id):
  // its copy carries that identity, so copies of one record (produced again when the commit after
  // them failed) are one receipt once a ferry consumer drains the dead-letter topic.
  const headers = message.headers ?? {};
  const own = Object.hasOwn(headers, FERRY_HEADERS.messageId) ? headers[FERRY_HEADERS.messageId] : undefined;
  const id = deadLetterIdentity(messageId, hasFerryMessageId(own));
  const ferryHeaders = {
    ...(id === null ? {} : { [FERRY_HEADERS.messageId]: id }),
    ...(typeof tenant === 'string' ? { [FERRY_HEADERS.tenantId]: tenant } : {}),
    [FERRY_HEADERS.rejectReason]: reason,
    'x-ferry-reject-detail': detail.slice(0, 1_000),
    'x-ferry-source-topic': source.topic,
    'x-ferry-source-partition': String(source.partition),
    'x-ferry-source-offset': message.offset,
  };
  const sourceKey = `${source.topic}/${source.partition}/${message.offset}`;
  return {
    sourceKey,
    message: {
      key: message.key ?? sourceKey,
      value: message.value ?? null,
      headers: { ...withoutOverruledTenant(producibleHeaders(message.headers), tenant), ...ferryHeaders },
    },
    ferryHeaders,
  };
}
