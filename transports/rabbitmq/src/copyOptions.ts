import type { MessageProperties, Options } from 'amqplib';
import { setOwnProperty } from '@ferry/core/transport';
import {
  encodableHeader,
  fieldBytes,
  headerTableRoom,
  MAX_HEADER_TABLE_BYTES,
  ROUTING_HEADERS,
  tableBytes,
} from './headerTable';

export { tableBytes } from './headerTable';

/**
 * The publish options of a copy the consumer publishes (to the dead-letter exchange or a retry
 * tier): the delivery's properties and headers (without `x-death`, overlaid with ferry's),
 * always encodable by amqplib. amqplib throws inside ConfirmChannel.publish when it cannot
 * encode them, after it queued the confirm callback, and every later confirm on that channel is
 * then credited to the publish before it (a copy reported unconfirmed, its delivery
 * dead-lettered twice); so nothing here may be what amqplib refuses.
 *
 * Headers: amqplib encodes a table into one 64 KiB scratch buffer (lib/defs.js); another client
 * can send a larger one (up to the frame size, 128 KiB); and the copy's content header frame
 * (properties and headers, ferry's added) must fit the frame_max of the connection it is
 * published on, else RabbitMQ closes that whole connection (FRAME_ERROR), and the delivery,
 * redelivered, is copied the same way again: for ever. The largest headers are left out of the
 * copy, named in `x-ferry-dropped-headers`, so the copy fits and still carries ferry's reason.
 * Short-string properties: amqplib refuses one over 255 UTF-8 bytes; a delivery's can be that
 * long once amqplib decoded bytes that were not UTF-8 to U+FFFD (3 bytes each): left out.
 */

/** What amqplib can encode of one header table: its scratch buffer. */
export const MAX_COPY_HEADER_BYTES = MAX_HEADER_TABLE_BYTES;

/** Names the headers left out of a copy because the table was too large for amqplib. */
export const DROPPED_HEADERS = 'x-ferry-dropped-headers';

/** Room kept for DROPPED_HEADERS itself: its name and up to 1,000 bytes of names. */
const DROPPED_RESERVE = 1 + DROPPED_HEADERS.length + 5 + 1_000;

/** Bytes DROPPED_HEADERS takes in a table besides its value: its name, type and length. */
const DROPPED_FIELD_BYTES = 1 + DROPPED_HEADERS.length + 5;

/**
 * The copy's headers: the delivery's, ferry's over them, within `maxBytes` (tableBytes; at most
 * MAX_COPY_HEADER_BYTES). Left out:
 * `x-death` (the broker's own record), and `CC` / `BCC`, which RabbitMQ reads at every publish as
 * extra routing keys (sender-selected distribution): the sender meant them for its own exchange;
 * on a copy to a tier queue or the dead-letter exchange they routed the copy elsewhere as well
 * (and a copy routed there was never returned, so a missing tier queue went unnoticed). A header
 * amqplib cannot encode (encodableHeader: a name over 255 bytes, there or in a nested table, a
 * table key `!`, a NaN, ...) is left out and named in DROPPED_HEADERS, as are the largest
 * headers of a table over `maxBytes`.
 */
export function copyHeaders(
  original: Readonly<Record<string, unknown>>,
  ferry: Readonly<Record<string, string>>,
  maxBytes: number = MAX_COPY_HEADER_BYTES,
): Record<string, unknown> {
  const max = Math.min(maxBytes, MAX_COPY_HEADER_BYTES);
  const { 'x-death': _death, ...delivered } = original;
  const dropped: string[] = [];
  const own: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(delivered)) {
    if (ROUTING_HEADERS.has(name)) continue;
    if (!encodableHeader(name, value)) dropped.push(name);
    else setOwnProperty(own, name, value);
  }
  const headers: Record<string, unknown> = { ...own, ...ferry };
  let bytes = tableBytes(headers);
  if (bytes <= max && dropped.length === 0) return headers;
  const largest = Object.keys(own)
    .filter((name) => !(name in ferry))
    .map((name) => ({ name, bytes: 1 + Buffer.byteLength(name) + fieldBytes(own[name]) }))
    .sort((a, b) => b.bytes - a.bytes);
  for (const entry of largest) {
    if (bytes + DROPPED_RESERVE <= max) break;
    delete headers[entry.name];
    dropped.push(entry.name);
    bytes -= entry.bytes;
  }
  // The names as far as they fit (a small frame_max leaves less than DROPPED_RESERVE).
  const room = Math.min(1_000, max - bytes - DROPPED_FIELD_BYTES);
  headers[DROPPED_HEADERS] = cutToBytes(dropped.join(', '), room);
  return headers;
}

/** `text` cut to at most `bytes` UTF-8 bytes, never mid-character. */
function cutToBytes(text: string, bytes: number): string {
  let cut = Buffer.from(text).subarray(0, Math.max(0, bytes)).toString();
  while (Buffer.byteLength(cut) > Math.max(0, bytes)) cut = cut.slice(0, -1);
  return cut;
}

/**
 * A short string (a property, the routing key) as amqplib can encode it again: undefined when
 * it is over 255 UTF-8 bytes (amqplib refuses it).
 */
export function shortString(value: string | undefined): string | undefined {
  return value !== undefined && Buffer.byteLength(value) <= 255 ? value : undefined;
}

/**
 * The copy's publish options: persistent (a transient delivery's copy too: the copy is all there
 * is of it once the delivery is acked), `mandatory` (a copy no queue takes is returned, not
 * confirmed as taken: see publishWithConfirm), every other property of the delivery: content
 * type and encoding, ids, reply-to, priority, type, timestamp, app id, and its user-id only when
 * it is `copyUserId`, the user of the connection the copy is published on (RabbitMQ refuses a
 * publish whose user-id is another's). Left out: the expiration (the delivery's time to live in
 * the work queue, spent; on a copy it would expire in its tier queue or the dead-letter queue,
 * and RabbitMQ's own dead-lettering drops it too), and CC / BCC (copyHeaders). Headers:
 * copyHeaders within what the content header frame leaves of `frameMax` (negotiatedFrameMax of
 * the channel the copy is published on; undefined: amqplib's 64 KiB only).
 */
export function copyOptions(
  properties: MessageProperties,
  ferry: Readonly<Record<string, string>>,
  frameMax?: number,
  copyUserId?: string,
): Options.Publish {
  const p = properties;
  const priority: unknown = p.priority;
  const kept: Options.Publish = {
    contentType: shortString(p.contentType as string | undefined),
    contentEncoding: shortString(p.contentEncoding as string | undefined),
    messageId: shortString(p.messageId as string | undefined),
    correlationId: shortString(p.correlationId as string | undefined),
    replyTo: shortString(p.replyTo as string | undefined),
    priority:
      Number.isInteger(priority) && (priority as number) >= 0 && (priority as number) <= 255
        ? (priority as number)
        : undefined,
    type: shortString(p.type as string | undefined),
    timestamp: p.timestamp as number | undefined,
    appId: shortString(p.appId as string | undefined),
    userId: copyUserId !== undefined && p.userId === copyUserId ? copyUserId : undefined,
  };
  const present = Object.entries(kept).filter(([, value]) => value !== undefined);
  const options: Options.Publish = { persistent: true, mandatory: true, ...Object.fromEntries(present) };
  const room = frameMax === undefined ? MAX_COPY_HEADER_BYTES : headerTableRoom(options, frameMax);
  return { ...options, headers: copyHeaders(p.headers ?? {}, ferry, room) };
}
