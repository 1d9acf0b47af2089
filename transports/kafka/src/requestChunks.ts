import { consecutiveRuns } from '@ferry/core/transport';
import type { OutboundRecord } from './wire';

/**
 * Bytes a record adds to a produce request beyond its key, value and headers (Kafka's record
 * format: attributes, varint lengths and deltas; generous, so the estimate stays an upper bound).
 */
const RECORD_OVERHEAD_BYTES = 32;
/** A record batch's own header (Kafka's v2 format: 61 bytes), one per partition in a request. */
export const BATCH_OVERHEAD_BYTES = 61;

/** An upper bound of what `record` adds, uncompressed, to a partition's record batch. */
export function recordBytes(record: OutboundRecord): number {
  let bytes = RECORD_OVERHEAD_BYTES + record.value.length;
  if (record.key !== null) bytes += Buffer.byteLength(record.key, 'utf8');
  for (const [name, value] of Object.entries(record.headers))
    bytes += 2 * 5 + Buffer.byteLength(name, 'utf8') + Buffer.byteLength(value, 'utf8');
  return bytes;
}

/**
 * Splits `records`, in order, into the sends of one publish: each within `maxBytes` once its
 * batch header is counted (a record alone over it is sent alone; the encoder refused larger
 * values). The clients put all of a send's records for one partition in one record batch, and
 * the broker refuses a batch over its message.max.bytes (1 MiB by default, maxMessageBytes here)
 * and closes the connection on a request over socket.request.max.bytes (100 MiB): one send of a
 * whole relay batch of large events failed every time, although each event was within limits.
 */
export function requestChunks(records: readonly OutboundRecord[], maxBytes: number): OutboundRecord[][] {
  return consecutiveRuns(records, recordBytes, maxBytes - BATCH_OVERHEAD_BYTES);
}
