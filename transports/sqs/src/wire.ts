import { createHash } from 'node:crypto';
import type { Message, MessageAttributeValue, SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { FERRY_HEADERS, type InboxAcceptInput, type OutboxMessage } from '@ferry/core';
import {
  eventHeaders,
  extractIdentity,
  ferryHeaderValues,
  messageIdFault,
  nestedBodyFault,
  oversizeBodyFault,
  parseJsonObjectBody,
  putStorableHeader,
  readFerryHeaders,
  resolveTenant,
  storableHeaderText,
  type TenantSource,
} from '@ferry/core/transport';
import { REJECT_REASONS, type RejectReason } from './errors';
import type { IdentityExtractor } from './options';
import { unwrapSnsNotification } from './sns';

/** OpenTelemetry's `messaging.system` of Amazon SQS: named by the publisher and on every message received. */
export const SQS_SYSTEM = 'aws_sqs';

/**
 * Wire format. MessageBody = JSON of the payload. Message attributes (all `String`), at most
 * 8 of SQS's 10, so a dead-letter copy still has room for the reject reason:
 *   x-ferry-message-id, x-ferry-event-type, x-ferry-tenant-id, x-ferry-correlation-id,
 *   x-ferry-causation-id, traceparent, tracestate, and x-ferry-headers = JSON of the event's
 *   own headers (packed into one attribute, since an event may carry any number of them).
 * Attributes whose value is null or empty are omitted (SQS rejects empty values).
 */
export const HEADERS_ATTRIBUTE = 'x-ferry-headers';

export type Attributes = Record<string, MessageAttributeValue>;

/**
 * The attributes ferry writes (above), most needed first: what a dead-letter copy keeps before
 * any other attribute a producer sent (a redrive needs the identity and the tenant; a producer's
 * own `x-ferry-*` names are not ferry's and rank with the rest).
 */
export const WIRE_ATTRIBUTES: readonly string[] = [
  FERRY_HEADERS.messageId,
  FERRY_HEADERS.tenantId,
  FERRY_HEADERS.eventType,
  FERRY_HEADERS.correlationId,
  FERRY_HEADERS.causationId,
  HEADERS_ATTRIBUTE,
  FERRY_HEADERS.traceparent,
  FERRY_HEADERS.tracestate,
];

/**
 * JSON that SQS takes as a body or attribute value: SQS refuses U+FFFE and U+FFFF (ElasticMQ
 * refuses the whole request), which JSON.stringify leaves as they are; they are written as
 * `\ufffe` / `\uffff` escapes instead, which parse back to the same value.
 */
export function sqsJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\ufffe\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16)}`);
}

/** Characters SQS does not take in a body or attribute value (its allowed set is #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF). */
const NOT_SQS_TEXT = /[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/u;

/**
 * `value` with every character SQS does not take (NOT_SQS_TEXT, unpaired surrogates too)
 * replaced with U+FFFD: for text ferry writes itself, e.g. a dead-letter copy's reject detail,
 * which quotes decoded JSON (`\uffff` on the wire is ASCII, decoded it is not).
 */
export function sqsText(value: string): string {
  return value.replace(new RegExp(NOT_SQS_TEXT.source, 'gu'), '\ufffd');
}

/** The first attribute whose value SQS would refuse, and why, or null. */
export function attributeTextFault(attributes: Attributes | undefined): string | null {
  for (const [name, value] of Object.entries(attributes ?? {})) {
    const match = value.StringValue === undefined ? null : NOT_SQS_TEXT.exec(value.StringValue);
    if (match) {
      const code = match[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
      return `attribute ${name} holds U+${code}, which SQS does not take`;
    }
  }
  return null;
}

/** What SQS takes as a FIFO MessageGroupId: 1 to 128 ASCII letters, digits and punctuation. */
const GROUP_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * The FIFO MessageGroupId of an ordering key: the key itself when SQS takes it, else
 * `ferry-key-` and the key's SHA-256 (base64url), the same for every event of that key, so an
 * ordering key with spaces, another script or over 128 characters keeps its order.
 */
export function messageGroupId(orderingKey: string): string {
  if (GROUP_ID.test(orderingKey)) return orderingKey;
  return `ferry-key-${createHash('sha256').update(orderingKey).digest('base64url')}`;
}

export function encodeAttributes(message: OutboxMessage): Attributes {
  const attributes: Attributes = {};
  const put = (name: string, value: string | null) => {
    if (value !== null && value.length > 0) attributes[name] = { DataType: 'String', StringValue: value };
  };
  for (const [name, value] of ferryHeaderValues(message)) put(name, value);
  const headers = eventHeaders(message);
  if (Object.keys(headers).length > 0) put(HEADERS_ATTRIBUTE, sqsJson(headers));
  return attributes;
}

/** SQS's size of a message: body plus every attribute's name, data type and value, in UTF-8 bytes. */
export function messageSize(body: string, attributes: Attributes | undefined): number {
  let size = Buffer.byteLength(body, 'utf8');
  for (const [name, value] of Object.entries(attributes ?? {})) {
    size += Buffer.byteLength(name, 'utf8') + Buffer.byteLength(value.DataType ?? '', 'utf8');
    size += Buffer.byteLength(value.StringValue ?? '', 'utf8') + (value.BinaryValue?.byteLength ?? 0);
  }
  return size;
}

/**
 * The batch entry for one outbox message; FIFO: group = messageGroupId of the ordering key (else
 * of the event id), dedup = event id.
 */
export function encodeEntry(
  entryId: string,
  message: OutboxMessage,
  fifo: boolean,
): SendMessageBatchRequestEntry & { MessageBody: string } {
  return {
    Id: entryId,
    MessageBody: sqsJson(message.payload),
    MessageAttributes: encodeAttributes(message),
    ...(fifo
      ? {
          MessageGroupId: messageGroupId(message.orderingKey ?? message.id),
          MessageDeduplicationId: message.id,
        }
      : {}),
  };
}

export type Decoded =
  | { readonly ok: true; readonly input: InboxAcceptInput }
  | {
      readonly ok: false;
      readonly reason: RejectReason;
      readonly detail: string;
      readonly messageId: string | null;
      /** The tenant the tenant source resolved before the message was refused (deadLetterTenant). */
      readonly tenantId?: string | null;
    };

export interface DecodeOptions {
  readonly consumer: string;
  readonly maxPayloadBytes: number;
  /**
   * Used when the message has no `x-ferry-message-id` attribute; null: the default, the SQS
   * MessageId (with `envelope: 'sns'` SNS's MessageId).
   */
  readonly identity: IdentityExtractor | null;
  /** `'sns'`: the body is SNS's notification envelope, taken off first (unwrapSnsNotification). */
  readonly envelope: 'none' | 'sns';
  /** Where the tenant comes from (checked once by checkTenantSource). */
  readonly tenant: TenantSource<Message>;
}

/** The SQS MessageId: stable across redeliveries of one send, new for every send. */
export const identityFromMessageId: IdentityExtractor = (message) => message.MessageId ?? null;

/** Turns a received message into an inbox input, or says why it is invalid before acceptance. */
export function decodeMessage(received: Message, options: DecodeOptions): Decoded {
  let message = received;
  let identity = options.identity ?? identityFromMessageId;
  if (options.envelope === 'sns') {
    // A deeply nested body is refused unparsed (the envelope itself is flat).
    const nested = nestedBodyFault(received.Body ?? '');
    if (nested !== null)
      return { ok: false, reason: REJECT_REASONS.payloadTooDeep, detail: nested, messageId: null };
    const sns = unwrapSnsNotification(received);
    if (!sns.ok)
      return { ok: false, reason: REJECT_REASONS.unparseableBody, detail: sns.detail, messageId: null };
    message = sns.message;
    identity = options.identity ?? (() => sns.snsMessageId);
  }
  const attributes = message.MessageAttributes ?? {};
  const ferry = readFerryHeaders((name) => attributeValue(attributes, name));
  // A ferry attribute that is present but unreadable is never replaced by the extracted id; the
  // extractor runs only without one, and what it does costs this message alone (extractIdentity).
  const extracted =
    ferry.messageId === undefined && ferry.fault === null ? extractIdentity(identity, message) : null;
  const messageId = ferry.messageId ?? (extracted?.ok ? extracted.messageId : null);
  // The tenant once resolved: what a copy of a delivery refused after that carries (deadLetterTenant).
  const resolved: { tenantId?: string | null } = {};
  const invalid = (reason: RejectReason, detail: string): Decoded => ({
    ok: false,
    reason,
    detail,
    messageId,
    tenantId: resolved.tenantId,
  });
  if (ferry.fault !== null) return invalid(REJECT_REASONS.invalidText, ferry.fault);
  if (messageId === null) {
    const why = extracted?.ok === false ? `; ${extracted.detail}` : '';
    return invalid(
      REJECT_REASONS.missingIdentity,
      `no x-ferry-message-id attribute and no extracted id${why}`,
    );
  }
  const idFault = messageIdFault(messageId);
  if (idFault !== null) return invalid(REJECT_REASONS.missingIdentity, idFault);
  const body = message.Body ?? '';
  // The limit itself is the acceptor's, on the parsed payload: this spares parsing only a body no
  // payload within it can be written as (whatever its escapes and whitespace).
  const oversize = oversizeBodyFault(body, options.maxPayloadBytes);
  if (oversize !== null) return invalid(REJECT_REASONS.payloadTooLarge, oversize);
  const nested = nestedBodyFault(body);
  if (nested !== null) return invalid(REJECT_REASONS.payloadTooDeep, nested);
  const tenant = resolveTenant(options.tenant, message, ferry.tenantId);
  if (!tenant.ok) return invalid(tenant.reason, tenant.detail);
  resolved.tenantId = tenant.tenantId;
  const parsed = parseJsonObjectBody(body);
  if (!parsed.ok) return invalid(REJECT_REASONS.unparseableBody, parsed.detail);
  return {
    ok: true,
    input: {
      consumer: options.consumer,
      messageId,
      tenantId: tenant.tenantId,
      payload: parsed.payload,
      headers: decodeHeaders(attributes),
      type: ferry.eventType ?? null,
      system: SQS_SYSTEM,
    },
  };
}

/**
 * The event's own headers (unpacked from x-ferry-headers, none of them a reserved name) plus
 * every other attribute, each when its name and value are storable text and its name is not
 * reserved (ferry's envelope attributes are kept): putStorableHeader. An attribute of any type
 * (attributeValue): a Binary one's bytes are text when they are UTF-8, as Kafka and RabbitMQ
 * header bytes are (a Java or boto3 producer may send a correlation id, a trace context or
 * x-ferry-headers itself as bytes).
 */
function decodeHeaders(attributes: Attributes): Record<string, string> {
  const headers: Record<string, string> = {};
  const packed = attributeValue(attributes, HEADERS_ATTRIBUTE);
  const packedText = packed === undefined ? undefined : storableHeaderText(packed);
  if (packedText !== undefined) {
    try {
      const parsed: unknown = JSON.parse(packedText);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
        for (const [name, value] of Object.entries(parsed)) {
          if (typeof value === 'string') putStorableHeader(headers, name, value, 'event');
        }
      }
    } catch {
      // Not JSON: it holds no headers ferry can read (and x-ferry-headers itself is reserved).
    }
  }
  for (const name of Object.keys(attributes)) {
    if (name === HEADERS_ATTRIBUTE) continue;
    const value = attributeValue(attributes, name);
    if (value !== undefined) putStorableHeader(headers, name, value);
  }
  return headers;
}

/**
 * An attribute's value, whatever its type: a String or Number (and custom `.x` types) value as
 * its text, a Binary one as its bytes, which readFerryHeaders (ferry's own attributes) and
 * putStorableHeader (every other) read as strict UTF-8, as the Kafka and RabbitMQ consumers read
 * bytes. Ignoring a Binary ferry attribute would take the SQS MessageId as the identity and no
 * tenant (the global scope) for what the producer named.
 */
function attributeValue(attributes: Attributes, name: string): string | Uint8Array | undefined {
  const value = attributes[name];
  if (!value) return undefined;
  if (value.DataType?.startsWith('Binary')) return value.BinaryValue;
  return value.StringValue;
}
