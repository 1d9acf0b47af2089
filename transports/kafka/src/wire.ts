import { FERRY_HEADERS, outboxHeaders, type InboxAcceptInput, type OutboxMessage } from '@ferry/core';
import type { IHeaders, KafkaMessage } from 'kafkajs';
import { REJECT_REASONS, type RejectReason } from './errors';

/** One record ready for `sendBatch`. */
export interface OutboundRecord {
  readonly id: string;
  readonly topic: string;
  readonly key: string | null;
  readonly value: Buffer;
  readonly headers: Record<string, string>;
}

/** How topics are chosen: the event's destination, else its type's route, else the default. */
export interface TopicRouting {
  readonly defaultTopic: string | null;
  readonly routes: Readonly<Record<string, string>>;
}

export type EncodeResult =
  { readonly ok: true; readonly record: OutboundRecord } | { readonly ok: false; readonly error: string };

/**
 * value = JSON of the payload, key = ordering key (null if none), headers = the event's own
 * headers overlaid with ferry's, so an event header can never forge ferry's message id.
 */
export function encodeOutboxMessage(
  message: OutboxMessage,
  routing: TopicRouting,
  maxMessageBytes: number,
): EncodeResult {
  const topic = message.destination ?? routing.routes[message.type] ?? routing.defaultTopic;
  if (topic === null || topic === undefined || topic.length === 0) {
    return {
      ok: false,
      error: `no topic for event type ${message.type}: no destination, route or defaultTopic`,
    };
  }
  let value: Buffer;
  try {
    value = Buffer.from(JSON.stringify(message.payload), 'utf8');
  } catch (error) {
    return {
      ok: false,
      error: `payload is not serializable: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  if (value.length > maxMessageBytes) {
    return { ok: false, error: `payload is ${value.length} bytes, over maxMessageBytes ${maxMessageBytes}` };
  }
  const headers = outboxHeaders(message, 'remove');
  return { ok: true, record: { id: message.id, topic, key: message.orderingKey, value, headers } };
}

/** What an identity extractor sees of a record. */
export interface InboundRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: string | null;
  readonly headers: Readonly<Record<string, string>>;
}

/** Returns a message id for a record without ferry's header, or null if it has none. */
export type IdentityExtractor = (record: InboundRecord) => string | null;

/** An identity for other producers' records: `topic-partition-offset`, stable across re-reads. */
export const topicPartitionOffsetIdentity: IdentityExtractor = (record) =>
  `${record.topic}-${record.partition}-${record.offset}`;

export function decodeHeaders(headers: IHeaders | undefined): Record<string, string> {
  const decoded: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (value === undefined) continue;
    const last = Array.isArray(value) ? value[value.length - 1] : value;
    if (last === undefined) continue;
    decoded[name] = Buffer.isBuffer(last) ? last.toString('utf8') : String(last);
  }
  return decoded;
}

export type DecodeResult =
  | { readonly ok: true; readonly input: InboxAcceptInput }
  | { readonly ok: false; readonly reason: RejectReason; readonly detail: string };

export interface DecodeContext {
  readonly consumer: string;
  readonly maxPayloadBytes: number;
  readonly identity: IdentityExtractor | null;
}

/** Turns a Kafka record into an inbox input, or says why it is invalid before acceptance. */
export function decodeRecord(
  topic: string,
  partition: number,
  message: KafkaMessage,
  context: DecodeContext,
): DecodeResult {
  const headers = decodeHeaders(message.headers);
  const key = message.key === null || message.key === undefined ? null : message.key.toString('utf8');
  const record: InboundRecord = { topic, partition, offset: message.offset, key, headers };
  const messageId = headers[FERRY_HEADERS.messageId] ?? context.identity?.(record) ?? null;
  if (messageId === null || messageId.length === 0) {
    return {
      ok: false,
      reason: REJECT_REASONS.missingIdentity,
      detail: `no ${FERRY_HEADERS.messageId} header and no identity`,
    };
  }
  const value = message.value;
  if (value === null || value === undefined) {
    return { ok: false, reason: REJECT_REASONS.unparseableBody, detail: 'record has no value' };
  }
  if (value.length > context.maxPayloadBytes) {
    return {
      ok: false,
      reason: REJECT_REASONS.payloadTooLarge,
      detail: `value is ${value.length} bytes, over ${context.maxPayloadBytes}`,
    };
  }
  let payload: unknown;
  try {
    payload = JSON.parse(value.toString('utf8'));
  } catch (error) {
    return {
      ok: false,
      reason: REJECT_REASONS.unparseableBody,
      detail: error instanceof Error ? error.message : 'invalid JSON',
    };
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    return { ok: false, reason: REJECT_REASONS.unparseableBody, detail: 'value is not a JSON object' };
  }
  return {
    ok: true,
    input: {
      consumer: context.consumer,
      messageId,
      tenantId: headers[FERRY_HEADERS.tenantId] ?? null,
      payload: payload as Record<string, unknown>,
      headers,
      type: headers[FERRY_HEADERS.eventType] ?? null,
    },
  };
}
