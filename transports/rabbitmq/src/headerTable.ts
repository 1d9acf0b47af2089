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
const ROUTING_HEADERS = new Set(['CC', 'BCC']);

/**
 * Why `headers` cannot be published as a field table (every value a long string), or null: a
 * name over 255 bytes (a field-table key is a short string), a table over
 * MAX_HEADER_TABLE_BYTES (4 bytes of length, then per header 1 + name + 1 + 4 + value bytes),
 * which amqplib cannot encode, or a name RabbitMQ reads as routing keys (ROUTING_HEADERS).
 */
export function headerTableFault(headers: Readonly<Record<string, string>>): string | null {
  let size = 4;
  for (const [name, value] of Object.entries(headers)) {
    const bytes = Buffer.byteLength(name);
    if (bytes > 255) return `header name ${name.slice(0, 40)}… is ${bytes} bytes; AMQP allows 255 bytes`;
    if (ROUTING_HEADERS.has(name)) {
      return `header ${name} is a RabbitMQ routing instruction (sender-selected distribution); rename it`;
    }
    size += 1 + bytes + 1 + 4 + Buffer.byteLength(value);
  }
  if (size <= MAX_HEADER_TABLE_BYTES) return null;
  return `the header table is ${size} bytes; amqplib encodes at most ${MAX_HEADER_TABLE_BYTES}`;
}
