import { FERRY_HEADERS, type InboxAcceptInput, type OutboxMessage } from '@ferry/core';
import {
  extractIdentity,
  messageIdFault,
  outboxHeaders,
  nestedBodyFault,
  oversizeBodyFault,
  parseJsonObjectBytes,
  putStorableHeader,
  readFerryHeaders,
  resolveTenant,
  strictUtf8Text,
  traceHeaderName,
  type FerryHeaderValues,
  type TenantSource,
} from '@ferry/core/transport';
import type { ConsumedHeaders, ConsumedRecord } from './client/types';
import { REJECT_REASONS, type RejectReason } from './errors';
import { ambiguousFerryHeader, headerValues, lastHeaderValue } from './recordHeaders';

/** OpenTelemetry's `messaging.system` of Kafka: named by the publisher and on every record consumed. */
export const KAFKA_SYSTEM = 'kafka';

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
  readonly defaultDestination: string | null;
  readonly routes: Readonly<Record<string, string>>;
}

/** The topic of an event: its destination, else its type's route, else the default; null: none. */
export function topicOf(message: OutboxMessage, routing: TopicRouting): string | null {
  const topic = message.destination ?? routing.routes[message.type] ?? routing.defaultDestination;
  return topic === null || topic === undefined || topic.length === 0 ? null : topic;
}

/**
 * Kafka's own topics. A produce to one is refused (kafkajs: INVALID_TOPIC_EXCEPTION), and
 * @platformatic/kafka 1.x throws a TypeError out of its network callback for one (an
 * uncaught exception that ends the process), so an event routed to one is `permanent` before
 * any client sees it.
 */
const KAFKA_INTERNAL_TOPICS: ReadonlySet<string> = new Set([
  '__consumer_offsets',
  '__transaction_state',
  '__share_group_state',
  '__cluster_metadata',
]);

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
  const topic = topicOf(message, routing);
  if (topic === null) {
    return {
      ok: false,
      error: `no topic for event type ${message.type}: no destination, route or defaultDestination`,
    };
  }
  if (KAFKA_INTERNAL_TOPICS.has(topic)) {
    return { ok: false, error: `topic ${topic} is internal to Kafka: no event is published to it` };
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
  const headers = outboxHeaders(message);
  return { ok: true, record: { id: message.id, topic, key: message.orderingKey, value, headers } };
}

/** What an identity extractor sees of a record. */
export interface InboundRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  /** The key as text (strict UTF-8); a record whose key is not UTF-8 reaches no function (see decodeRecord). */
  readonly key: string | null;
  readonly headers: Readonly<Record<string, string>>;
}

/** Returns a message id for a record without ferry's header, or null if it has none. */
export type IdentityExtractor = (record: InboundRecord) => string | null;

/** An identity for other producers' records: `topic-partition-offset`, stable across re-reads. */
export const topicPartitionOffsetIdentity: IdentityExtractor = (record) =>
  `${record.topic}-${record.partition}-${record.offset}`;

/**
 * The record's headers passed on to the inbox: the last value of each (of a repeated trace
 * header, the one replacesTraceValue chooses), when its name and value are storable text and its name is not reserved (putStorableHeader keeps ferry's envelope
 * headers and leaves out the transport's own and any other case of a reserved name).
 */
export function decodeHeaders(headers: ConsumedHeaders | undefined): Record<string, string> {
  const decoded: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    // Of a trace header given more than once, each value in order: putStorableHeader's rule
    // (replacesTraceValue) keeps a valid one over a malformed repeat, as across other cases of
    // the name. Of any other header, the last value.
    if (traceHeaderName(name) !== undefined) {
      for (const one of headerValues(value)) putStorableHeader(decoded, name, one);
      continue;
    }
    const last = lastHeaderValue(value);
    if (last !== undefined) putStorableHeader(decoded, name, last);
  }
  return decoded;
}

export type DecodeResult =
  | { readonly ok: true; readonly input: InboxAcceptInput }
  | {
      readonly ok: false;
      readonly reason: RejectReason;
      readonly detail: string;
      /** The record's identity where it has one (reported with the dead letter). */
      readonly messageId: string | null;
      /** The tenant the tenant source resolved before the record was refused (deadLetterTenant). */
      readonly tenantId?: string | null;
    };

export interface DecodeContext {
  readonly consumer: string;
  readonly maxPayloadBytes: number;
  readonly identity: IdentityExtractor | null;
  /** Where the tenant comes from; `'header'` when absent. */
  readonly tenant?: TenantSource<InboundRecord>;
}

/** A record with a null value: a deletion marker on a compacted topic, never an inbox input. */
export function isTombstone(message: ConsumedRecord): boolean {
  return message.value === null || message.value === undefined;
}

/**
 * Turns a Kafka record into an inbox input, or says why it cannot be one. Never throws: a
 * record that cannot be decoded is dead-lettered, so it cannot stall its partition.
 */
export function decodeRecord(
  topic: string,
  partition: number,
  message: ConsumedRecord,
  context: DecodeContext,
): DecodeResult {
  const headers = decodeHeaders(message.headers);
  const ambiguous = ambiguousFerryHeader(message.headers);
  const ferry = readFerryHeaders((name) =>
    ambiguous === null ? lastHeaderValue(message.headers?.[name]) : undefined,
  );
  const key = recordKey(message.key);
  const record: InboundRecord = { topic, partition, offset: message.offset, key: key.text, headers };
  const identity = recordIdentity(record, ferry, key.fault === null ? context.identity : null);
  const messageId = identity.ok ? identity.messageId : null;
  // The tenant once resolved: what a copy of a delivery refused after that carries (deadLetterTenant).
  const resolved: { tenantId?: string | null } = {};
  const invalid = (reason: RejectReason, detail: string): DecodeResult => ({
    ok: false,
    reason,
    detail,
    messageId,
    tenantId: resolved.tenantId,
  });
  const value = message.value;
  if (value === null || value === undefined)
    return invalid(REJECT_REASONS.tombstone, 'record has a null value');
  if (ambiguous !== null) return invalid(REJECT_REASONS.ambiguousHeader, ambiguous);
  if (ferry.fault !== null) return invalid(REJECT_REASONS.invalidText, ferry.fault);
  const keyNeeded =
    (ferry.messageId === undefined && context.identity !== null) || typeof context.tenant === 'function';
  if (key.fault !== null && keyNeeded) return invalid(REJECT_REASONS.invalidText, key.fault);
  if (!identity.ok) return invalid(REJECT_REASONS.missingIdentity, identity.detail);
  const idFault = messageIdFault(identity.messageId);
  if (idFault !== null) return invalid(REJECT_REASONS.missingIdentity, idFault);
  const tenant = resolveTenant(context.tenant ?? 'header', record, ferry.tenantId);
  if (!tenant.ok) return invalid(tenant.reason, tenant.detail);
  resolved.tenantId = tenant.tenantId;
  // The limit itself is the inbox's, on the parsed payload: this spares parsing only a value no
  // payload within it can be written as (whatever its escapes and whitespace).
  const oversize = oversizeBodyFault(value, context.maxPayloadBytes);
  if (oversize !== null) return invalid(REJECT_REASONS.payloadTooLarge, oversize);
  const nested = nestedBodyFault(value);
  if (nested !== null) return invalid(REJECT_REASONS.payloadTooDeep, nested);
  const body = parseJsonObjectBytes(value);
  if (!body.ok) return invalid(REJECT_REASONS.unparseableBody, body.detail);
  return {
    ok: true,
    input: {
      consumer: context.consumer,
      messageId: identity.messageId,
      tenantId: tenant.tenantId,
      payload: body.payload,
      headers,
      type: ferry.eventType ?? null,
      system: KAFKA_SYSTEM,
    },
  };
}

interface RecordKey {
  /** The key as text, or null when the record has none or it is not valid UTF-8. */
  readonly text: string | null;
  /** Why the key cannot be text (bytes that are not UTF-8), or null. */
  readonly fault: string | null;
}

/**
 * A record key as text, decoded as strict UTF-8: never lossily, since keys `ff 61` and `fe 61`
 * would both read `\ufffda`, and an identity or tenant function keyed on them would merge two
 * records (one lost as a duplicate) or two tenants. A key that is not UTF-8 is given to no
 * function: the record is dead-lettered `invalid_text` when one would see it (decodeRecord).
 */
function recordKey(key: Buffer | null | undefined): RecordKey {
  if (key === null || key === undefined) return { text: null, fault: null };
  const text = strictUtf8Text(key);
  return text === undefined
    ? { text: null, fault: `the record key is bytes that are not valid UTF-8 (${key.length} bytes)` }
    : { text, fault: null };
}

type Identity =
  { readonly ok: true; readonly messageId: string } | { readonly ok: false; readonly detail: string };

/**
 * ferry's message-id header, else the extractor's answer; an extractor that throws gives no
 * identity. A record whose ferry headers have a fault has none beyond its header's: the extractor
 * must not stand in for a message-id header that was not UTF-8.
 */
function recordIdentity(
  record: InboundRecord,
  ferry: FerryHeaderValues,
  extractor: IdentityExtractor | null,
): Identity {
  const header = ferry.messageId;
  if (header !== undefined) return { ok: true, messageId: header };
  if (ferry.fault !== null) return { ok: false, detail: ferry.fault };
  if (extractor === null)
    return { ok: false, detail: `no ${FERRY_HEADERS.messageId} header and no identity` };
  const extracted = extractIdentity(extractor, record);
  return extracted.ok
    ? extracted
    : { ok: false, detail: `no ${FERRY_HEADERS.messageId} header and ${extracted.detail}` };
}
