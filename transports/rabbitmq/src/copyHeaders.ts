/**
 * The headers of a copy the consumer publishes (to the dead-letter exchange or a retry tier):
 * the delivery's own without `x-death`, overlaid with ferry's, always encodable by amqplib.
 *
 * amqplib encodes a header table into one 64 KiB scratch buffer (lib/defs.js); a larger table
 * throws inside ConfirmChannel.publish after the confirm callback was queued, and every later
 * confirm on that channel is then credited to the publish before it (a copy reported
 * unconfirmed, its delivery dead-lettered twice). Another client can send a larger table (up to
 * the frame size, 128 KiB): its largest headers are left out of the copy, named in
 * `x-ferry-dropped-headers`, so the copy still carries ferry's reason.
 */

/** What amqplib can encode of one header table: its scratch buffer. */
export const MAX_COPY_HEADER_BYTES = 65_536;

/** Names the headers left out of a copy because the table was too large for amqplib. */
export const DROPPED_HEADERS = 'x-ferry-dropped-headers';

/** An upper bound of the bytes amqplib writes for one field value (lib/codec.js). */
function fieldBytes(value: unknown): number {
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

/** Room kept for DROPPED_HEADERS itself: its name and up to 1,000 bytes of names. */
const DROPPED_RESERVE = 1 + DROPPED_HEADERS.length + 5 + 1_000;

/** The copy's headers: the delivery's without `x-death`, ferry's over them, within MAX_COPY_HEADER_BYTES. */
export function copyHeaders(
  original: Readonly<Record<string, unknown>>,
  ferry: Readonly<Record<string, string>>,
): Record<string, unknown> {
  const { 'x-death': _death, ...own } = original;
  const headers: Record<string, unknown> = { ...own, ...ferry };
  let bytes = tableBytes(headers);
  if (bytes <= MAX_COPY_HEADER_BYTES) return headers;
  const largest = Object.keys(own)
    .filter((name) => !(name in ferry))
    .map((name) => ({ name, bytes: 1 + Buffer.byteLength(name) + fieldBytes(own[name]) }))
    .sort((a, b) => b.bytes - a.bytes);
  const dropped: string[] = [];
  for (const entry of largest) {
    if (bytes + DROPPED_RESERVE <= MAX_COPY_HEADER_BYTES) break;
    delete headers[entry.name];
    dropped.push(entry.name);
    bytes -= entry.bytes;
  }
  headers[DROPPED_HEADERS] = Buffer.from(dropped.join(', ')).subarray(0, 1_000).toString();
  return headers;
}
