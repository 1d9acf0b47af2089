import type { Message } from 'amqplib';
import { FERRY_HEADERS, type InboxAcceptInput } from '@ferry/core';
import {
  deadLetterIdentity,
  extractIdentity,
  hasFerryMessageId,
  messageIdFault,
  nonEmptyValue,
  nestedBodyFault,
  oversizeBodyFault,
  parseJsonObjectBytes,
  payloadSizeFault,
  putStorableHeader,
  readFerryHeaders,
  resolveTenant,
  type TenantSource,
} from '@ferry/core/transport';
import { unreadBody, type UnreadBody } from './bodyGuard';
import { contentTypeFault } from './contentType';
import { REJECT_REASONS, type RejectReason } from './errors';
import { LOSSY, ferryHeaderValue, maybeLossy, plainHeaderValue } from './headerValue';

/** OpenTelemetry's `messaging.system` of RabbitMQ: named by the publisher and on every delivery. */
export const RABBITMQ_SYSTEM = 'rabbitmq';

/** Reads a value out of a delivery: the identity of messages from other producers. */
export type DeliveryExtractor = (message: Message) => string | null | undefined;

export interface DecodeOptions {
  readonly consumer: string;
  readonly maxPayloadBytes: number;
  readonly contentTypes: readonly string[];
  readonly acceptMissingContentType: boolean;
  readonly identity?: DeliveryExtractor;
  /** Where the tenant comes from (checked once by checkTenantSource). */
  readonly tenant: TenantSource<Message>;
}

export type Decoded =
  | { readonly ok: true; readonly input: InboxAcceptInput }
  | {
      readonly ok: false;
      readonly reason: RejectReason;
      readonly detail: string;
      readonly messageId: string | null;
      /** The tenant the tenant source resolved before the delivery was refused (deadLetterTenant). */
      readonly tenantId?: string | null;
    };

/**
 * RabbitMQ's own dead-letter headers, not passed to the inbox; ferry's reserved names
 * (attempts, reject reason, dropped headers, other cases) are left out by putStorableHeader.
 */
const TRANSPORT_HEADERS = new Set<string>([
  'x-death',
  'x-first-death-exchange',
  'x-first-death-queue',
  'x-first-death-reason',
]);

/**
 * Why a header table cannot be read with certainty, or null. amqplib decodes a table with
 * `fields[key] = value`: a field named `__proto__` holding a table becomes the prototype of the
 * headers object (review 57: ferry's id and tenant were read from inside it, where no other AMQP
 * reader sees a ferry header); holding anything else it is dropped without a trace.
 */
function prototypeFieldFault(headers: object): string | null {
  const prototype: unknown = Object.getPrototypeOf(headers);
  if (prototype === Object.prototype || prototype === null) return null;
  return 'the header table holds a field named __proto__ holding a table, which amqplib decodes as the prototype of the headers: no header of it is read';
}

/**
 * Turns a delivery into an inbox input, or says why it is invalid before acceptance.
 * Identity: ferry's message-id header, else the AMQP messageId, else the extractor. `unread`: the
 * body the consumer did not read, over its maxBodyBytes (bodyGuard.ts; found by the message
 * amqplib delivered, so passed for a message copied from it): refused `payload_too_large`.
 */
export function decodeDelivery(
  message: Message,
  options: DecodeOptions,
  unread: UnreadBody | undefined = unreadBody(message),
): Decoded {
  const headers = message.properties.headers ?? {};
  const table = prototypeFieldFault(headers);
  if (table !== null) {
    const id = nonEmptyValue(message.properties.messageId);
    return { ok: false, reason: REJECT_REASONS.ambiguousHeader, detail: table, messageId: id ?? null };
  }
  // The table's own fields only: never a member an object inherits.
  const ferry = readFerryHeaders((name) =>
    ferryHeaderValue(Object.hasOwn(headers, name) ? headers[name] : undefined),
  );
  if (ferry.fault !== null) {
    // Never the AMQP messageId or the extractor in place of a message-id header that is not text.
    const reported = ferry.messageId ?? null;
    return { ok: false, reason: REJECT_REASONS.invalidText, detail: ferry.fault, messageId: reported };
  }
  const amqpMessageId = nonEmptyValue(message.properties.messageId);
  // The extractor runs only for a delivery with neither id; what it does costs this delivery alone.
  // Never for a body the consumer did not read: its content is an empty stand-in, and an extractor
  // reading the body threw (missing_identity) or named the copy from nothing.
  const extracted =
    ferry.messageId === undefined && amqpMessageId === undefined && options.identity && unread === undefined
      ? extractIdentity(options.identity, message)
      : null;
  const messageId = ferry.messageId ?? amqpMessageId ?? (extracted?.ok ? extracted.messageId : null);
  // The tenant once resolved: what a copy of a delivery refused after that carries (deadLetterTenant).
  const resolved: { tenantId?: string | null } = {};
  const invalid = (reason: RejectReason, detail: string): Decoded => ({
    ok: false,
    reason,
    detail,
    messageId,
    tenantId: resolved.tenantId,
  });
  // amqplib decoded the messageId, and whatever the extractor reads (properties, routing key,
  // long-string headers), lossily: two ids differing only in bytes that were not UTF-8 would be one.
  if (ferry.messageId === undefined && messageId !== null && maybeLossy(messageId)) {
    const from = messageId === amqpMessageId ? 'the AMQP messageId' : "the identity extractor's id";
    return invalid(REJECT_REASONS.invalidText, `${from} holds ${LOSSY}`);
  }
  // Before the identity checks: an unread body is refused for its size, with or without an id.
  if (unread !== undefined) return invalid(REJECT_REASONS.payloadTooLarge, unreadBodyDetail(unread));
  if (messageId === null) {
    const why = extracted?.ok === false ? `; ${extracted.detail}` : '';
    return invalid(
      REJECT_REASONS.missingIdentity,
      `no x-ferry-message-id header, messageId or extracted id${why}`,
    );
  }
  const idFault = messageIdFault(messageId);
  if (idFault !== null) return invalid(REJECT_REASONS.missingIdentity, idFault);
  // Spares parsing only a body no payload within the limit can be written as (its escapes and
  // whitespace); the limit itself is measured on the parsed payload, below.
  const oversize = oversizeBodyFault(message.content, options.maxPayloadBytes);
  if (oversize !== null) return invalid(REJECT_REASONS.payloadTooLarge, oversize);
  const nested = nestedBodyFault(message.content);
  if (nested !== null) return invalid(REJECT_REASONS.payloadTooDeep, nested);
  const typeFault = contentTypeFault(
    message.properties.contentType,
    options.contentTypes,
    options.acceptMissingContentType,
  );
  if (typeFault !== null) return invalid(REJECT_REASONS.unsupportedContentType, typeFault);
  const tenant = resolveTenant(options.tenant, message, ferry.tenantId);
  if (!tenant.ok) return invalid(tenant.reason, tenant.detail);
  // A tenant function reads what amqplib decoded lossily, as the extractor does.
  if (typeof options.tenant === 'function' && tenant.tenantId !== null && maybeLossy(tenant.tenantId)) {
    return invalid(REJECT_REASONS.invalidText, `the tenant function's tenant holds ${LOSSY}`);
  }
  resolved.tenantId = tenant.tenantId;
  const body = parseJsonObjectBytes(message.content);
  if (!body.ok) {
    // ferry reads the body as it arrived: a compressed one (gzip) says so in the detail.
    const encoding = nonEmptyValue(message.properties.contentEncoding);
    const detail = encoding === undefined ? body.detail : `${body.detail} (content encoding ${encoding})`;
    return invalid(REJECT_REASONS.unparseableBody, detail);
  }
  // Measured only for a body over the limit in bytes: a body within it is taken as within it (the
  // acceptor measures its payload again against its own limit).
  const payloadFault =
    message.content.length > options.maxPayloadBytes
      ? payloadSizeFault(body.payload, options.maxPayloadBytes)
      : null;
  if (payloadFault !== null) return invalid(payloadFault.reason, payloadFault.detail);
  return {
    ok: true,
    input: {
      consumer: options.consumer,
      messageId,
      tenantId: tenant.tenantId,
      payload: body.payload,
      headers: stringHeaders(headers),
      type: ferry.eventType ?? nonEmptyValue(message.properties.type) ?? null,
      system: RABBITMQ_SYSTEM,
    },
  };
}

/** Why a body the consumer did not read is refused. */
function unreadBodyDetail(unread: UnreadBody): string {
  return `the body of ${unread.bytes} bytes was not read: over maxBodyBytes ${unread.bound} (the dead-letter copy has no body)`;
}

/**
 * ferry's message-id header for the dead-letter copy of `message`, holding the identity the
 * consumer used when the delivery had no such header (the AMQP messageId, also kept as the copy's
 * property, or the extractor's id, which read what the copy does not keep: its exchange, a header
 * left out of a full table): deadLetterIdentity. Empty when it had one (an empty one is none), or for an id amqplib
 * decoded lossily (the consumer refused it).
 */
export function deadLetterIdentityHeader(message: Message, messageId: string | null): Record<string, string> {
  const headers = message.properties.headers ?? {};
  const own = Object.hasOwn(headers, FERRY_HEADERS.messageId) ? headers[FERRY_HEADERS.messageId] : undefined;
  const id = deadLetterIdentity(messageId, hasFerryMessageId(own));
  return id === null || maybeLossy(id) ? {} : { [FERRY_HEADERS.messageId]: id };
}

/** The delivery's headers that are storable text, without the transport's own (putStorableHeader). */
function stringHeaders(headers: Readonly<Record<string, unknown>>): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (TRANSPORT_HEADERS.has(name)) continue;
    const text = plainHeaderValue(value);
    if (text !== undefined) putStorableHeader(result, name, text);
  }
  return result;
}
