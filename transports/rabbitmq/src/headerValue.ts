import type { UnreadableHeader } from '@ferry/core/transport';

/**
 * How ferry reads a header value as amqplib decoded it, whatever AMQP field-table type another
 * client sent (the Java client writes them all): the one place a delivery header becomes text.
 *
 * amqplib gives a long string (`S`) as a string it decoded as UTF-8 lossily (bytes that are not
 * UTF-8 become U+FFFD), a byte array (`x`) as a Buffer, every integer and float type as a number
 * (a 64-bit `l` beyond ±(2^53 − 1) rounded), a boolean, void as null, a decimal (`D`) or
 * timestamp (`T`) as `{ '!': type, value }`, a nested table (`F`) as an object, an array (`A`)
 * as an array.
 */
type HeaderReading =
  | { readonly kind: 'absent' }
  | { readonly kind: 'string'; readonly text: string }
  | { readonly kind: 'bytes'; readonly bytes: Buffer }
  | { readonly kind: 'integer'; readonly text: string }
  | { readonly kind: 'scalar'; readonly text: string; readonly what: string }
  | { readonly kind: 'other'; readonly what: string };

function readHeader(value: unknown): HeaderReading {
  if (value === undefined || value === null) return { kind: 'absent' };
  if (typeof value === 'string') return { kind: 'string', text: value };
  if (Buffer.isBuffer(value)) return { kind: 'bytes', bytes: value };
  if (typeof value === 'boolean') return { kind: 'scalar', text: String(value), what: 'a boolean, not text' };
  if (typeof value === 'bigint') return { kind: 'integer', text: String(value) };
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value)) return { kind: 'integer', text: String(value) };
    if (Number.isInteger(value)) {
      return { kind: 'other', what: 'an integer beyond ±(2^53 − 1), which amqplib does not read exactly' };
    }
    return { kind: 'scalar', text: String(value), what: 'a number that is not an integer' };
  }
  if (Array.isArray(value)) return { kind: 'other', what: 'a field array, not text' };
  if (typeof value === 'object' && '!' in value) {
    // amqplib's tagged types: 'timestamp', 'decimal'.
    return { kind: 'other', what: `a ${String((value as { '!': unknown })['!'])}, not text` };
  }
  return {
    kind: 'other',
    what: `${typeof value === 'object' ? 'a field table' : `a ${typeof value}`}, not text`,
  };
}

/** Why text holding U+FFFD cannot be an identity or tenant. */
export const LOSSY = 'U+FFFD: amqplib decodes bytes that are not UTF-8 to it';

/**
 * Whether text amqplib decoded (a long string, a short string property such as `messageId`) may
 * have lost bytes: it holds U+FFFD, which amqplib puts where the bytes were not UTF-8.
 */
export function maybeLossy(text: string): boolean {
  return text.includes('\uFFFD');
}

/**
 * An application header as text, or as bytes (decoded strictly by putStorableHeader); undefined
 * when it is left out: void, and what is not text or not exact (a table, array, decimal,
 * timestamp, an integer amqplib rounded). Numbers and booleans read as their text.
 */
export function plainHeaderValue(value: unknown): string | Buffer | undefined {
  const read = readHeader(value);
  if (read.kind === 'bytes') return read.bytes;
  return read.kind === 'string' || read.kind === 'integer' || read.kind === 'scalar' ? read.text : undefined;
}

/** An application header as text; undefined for bytes and whatever plainHeaderValue leaves out. */
export function headerText(value: unknown): string | undefined {
  const read = plainHeaderValue(value);
  return typeof read === 'string' ? read : undefined;
}

/**
 * One of ferry's identity, tenant and type headers, for readFerryHeaders: text, UTF-8 bytes or
 * an exact integer; void is absent. Anything else present is unreadable, and the delivery is
 * dead-lettered as `invalid_text` instead of taking a fallback (the AMQP messageId, no tenant):
 * a boolean, a fraction, a rounded integer, a table, array, decimal or timestamp, and a long
 * string holding U+FFFD, which may stand for bytes that were not UTF-8 (two ids differing there
 * would become one, the second lost as a duplicate).
 */
export function ferryHeaderValue(value: unknown): string | Buffer | UnreadableHeader | undefined {
  const read = readHeader(value);
  switch (read.kind) {
    case 'absent':
      return undefined;
    case 'bytes':
      return read.bytes;
    case 'integer':
      return read.text;
    case 'string':
      return maybeLossy(read.text) ? { unreadable: `a long string holding ${LOSSY}` } : read.text;
    case 'scalar':
    case 'other':
      return { unreadable: read.what };
  }
}
