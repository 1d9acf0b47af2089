import { createRequire } from 'node:module';
import type { Options } from 'amqplib';
import { setOwnProperty } from '@ferry/core/transport';

/** amqplib's own field-table encoder (lib/codec.js; the package has no exports map). */
const codec = createRequire(__filename)('amqplib/lib/codec') as {
  encodeTable(buffer: Buffer, table: Readonly<Record<string, unknown>>, offset: number): number;
};

/**
 * amqplib encodes a publish's header table in a scratch buffer of this many bytes: a larger
 * table throws RangeError mid-publish (after the confirm callback was queued), or, when only
 * the last value crosses the end, is written cut short.
 */
export const MAX_HEADER_TABLE_BYTES = 65_536;

/**
 * Header names RabbitMQ reads at publish as extra routing keys (sender-selected distribution),
 * which must then be arrays: an event header `CC: "ops@example.com"` closed the channel (406)
 * under the whole batch; as routing instructions they would send the event where its route
 * does not.
 */
export const ROUTING_HEADERS: ReadonlySet<string> = new Set(['CC', 'BCC']);

/** amqplib writes a field-table key as a short string: at most this many UTF-8 bytes. */
export const MAX_NAME_BYTES = 255;

/** One scratch buffer for encodableHeader (encoding is synchronous). */
let scratch: Buffer | undefined;

/**
 * Whether amqplib can encode the header `name: value` (as a delivery from another client decoded
 * it), tried with amqplib's own encoder: a name over 255 bytes (U+FFFD for bytes that were not
 * UTF-8), a nested table with a key `!` or `hasOwnProperty`, a double NaN or -Infinity, ... each
 * make it throw; inside ConfirmChannel.publish that throw comes after the confirm callback was
 * queued. A header too large for the buffer on its own cannot be encoded either.
 */
export function encodableHeader(name: string, value: unknown): boolean {
  scratch ??= Buffer.alloc(MAX_HEADER_TABLE_BYTES);
  const table: Record<string, unknown> = {};
  setOwnProperty(table, name, value);
  try {
    codec.encodeTable(scratch, table, 0);
    return true;
  } catch {
    return false;
  }
}

/** An upper bound of the bytes amqplib writes for one field value (lib/codec.js); exact for text. */
export function fieldBytes(value: unknown): number {
  if (value === null) return 1;
  if (typeof value === 'string') return 5 + Buffer.byteLength(value);
  if (Buffer.isBuffer(value)) return 5 + value.length;
  if (typeof value === 'boolean') return 2;
  if (Array.isArray(value))
    return 5 + value.reduce((sum: number, item: unknown) => sum + fieldBytes(item), 0);
  if (typeof value === 'object' && value !== undefined && !('!' in value)) {
    return 1 + tableBytes(value as Readonly<Record<string, unknown>>);
  }
  return 9;
}

/** An upper bound of the bytes amqplib writes for a header table (its length prefix included). */
export function tableBytes(table: Readonly<Record<string, unknown>>): number {
  let bytes = 4;
  for (const [name, value] of Object.entries(table)) {
    if (value !== undefined) bytes += 1 + Buffer.byteLength(name) + fieldBytes(value);
  }
  return bytes;
}

/**
 * Why `headers` cannot be published as a field table (every value a long string), or null: a
 * name over 255 bytes (a field-table key is a short string), a table over
 * MAX_HEADER_TABLE_BYTES (tableBytes, exact for text), which amqplib cannot encode, or a name
 * RabbitMQ reads as routing keys (ROUTING_HEADERS).
 */
export function headerTableFault(headers: Readonly<Record<string, string>>): string | null {
  for (const name of Object.keys(headers)) {
    const bytes = Buffer.byteLength(name);
    if (bytes > MAX_NAME_BYTES)
      return `header name ${name.slice(0, 40)}… is ${bytes} bytes; AMQP allows ${MAX_NAME_BYTES} bytes`;
    if (ROUTING_HEADERS.has(name)) {
      return `header ${name} is a RabbitMQ routing instruction (sender-selected distribution); rename it`;
    }
  }
  const size = tableBytes(headers);
  if (size <= MAX_HEADER_TABLE_BYTES) return null;
  return `the header table is ${size} bytes; amqplib encodes at most ${MAX_HEADER_TABLE_BYTES}`;
}

/**
 * The bytes of a content header frame besides its properties: the frame's type, channel and
 * size (7), the class id, weight, body size and property flags (14), the frame end (1).
 */
const CONTENT_HEADER_FRAME_BYTES = 22;

/** The publish properties amqplib writes as short strings (1 + their UTF-8 bytes). */
const SHORT_STRING_PROPERTIES = [
  'contentType',
  'contentEncoding',
  'correlationId',
  'replyTo',
  'expiration',
  'messageId',
  'type',
  'userId',
  'appId',
] as const;

/** The bytes of the content header frame amqplib writes for these options, their header table aside. */
function bytesBesideHeaders(options: Readonly<Options.Publish>): number {
  let bytes = CONTENT_HEADER_FRAME_BYTES + 1 + 1 + 8;
  for (const name of SHORT_STRING_PROPERTIES) {
    const value: unknown = options[name];
    if (value !== undefined && value !== null) bytes += 1 + Buffer.byteLength(String(value));
  }
  return bytes;
}

/**
 * Whether every publish whose header table passed headerTableFault (at most
 * MAX_HEADER_TABLE_BYTES) fits a frame of `frameMax` whatever its other properties (each short
 * string at most 255 bytes), so that frameFault need not be asked; true when it is unknown.
 */
export function fitsEveryFrame(frameMax: number | undefined): boolean {
  const mostBeside = CONTENT_HEADER_FRAME_BYTES + 1 + 1 + 8 + SHORT_STRING_PROPERTIES.length * 256;
  return frameMax === undefined || frameMax >= MAX_HEADER_TABLE_BYTES + mostBeside;
}

/**
 * An upper bound of the bytes of the content header frame amqplib writes for a publish with
 * these options (its header table, always written, by tableBytes; deliveryMode, priority and
 * timestamp always counted). The frame must fit the connection's negotiated frame_max: amqplib
 * writes it as one frame whatever its size, and RabbitMQ closes the whole connection
 * (FRAME_ERROR) at one larger.
 */
export function contentHeaderBytes(options: Readonly<Options.Publish>): number {
  return bytesBesideHeaders(options) + tableBytes((options.headers ?? {}) as Record<string, unknown>);
}

/** The bytes (tableBytes) a header table may take in a publish with these options within `frameMax`. */
export function headerTableRoom(options: Readonly<Options.Publish>, frameMax: number): number {
  return frameMax - bytesBesideHeaders(options);
}

/**
 * The frame_max a channel's connection negotiated with the broker (amqplib keeps it on its
 * connection object after tuning), or undefined when amqplib does not say.
 */
export function negotiatedFrameMax(channel: { readonly connection: unknown }): number | undefined {
  const frameMax = (channel.connection as { frameMax?: unknown } | null | undefined)?.frameMax;
  return typeof frameMax === 'number' && frameMax > 0 ? frameMax : undefined;
}

/**
 * Why a publish with these options cannot be sent on a connection with this frame_max (its
 * content header frame is larger: contentHeaderBytes), or null.
 */
export function frameFault(options: Readonly<Options.Publish>, frameMax: number | undefined): string | null {
  if (frameMax === undefined) return null;
  const bytes = contentHeaderBytes(options);
  if (bytes <= frameMax) return null;
  return `the properties and headers take a ${bytes}-byte content header frame; the connection's frame_max is ${frameMax} bytes`;
}
