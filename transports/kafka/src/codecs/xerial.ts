/**
 * Snappy as Kafka producers write it. The Java client (snappy-java's SnappyOutputStream) frames
 * its blocks the "xerial" way: the magic `\x82SNAPPY\x00`, two int32 (version, compatible
 * version), then blocks, each an int32 big-endian length and that many bytes of one raw snappy
 * block. librdkafka and Go clients may write one raw block instead. Both reach ferry.
 */
const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const XERIAL_HEADER_BYTES = 16;
const LENGTH_BYTES = 4;

export function isXerialFramed(data: Uint8Array): boolean {
  return (
    data.length >= XERIAL_HEADER_BYTES && Buffer.from(data.buffer, data.byteOffset, 8).equals(XERIAL_MAGIC)
  );
}

/**
 * The uncompressed bytes of a snappy payload, xerial-framed or one raw block; `block` decodes
 * one raw snappy block. A frame whose block lengths overrun its end throws.
 */
export function unframeSnappy(data: Uint8Array, block: (raw: Uint8Array) => Uint8Array): Buffer {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.length);
  if (!isXerialFramed(bytes)) return Buffer.from(block(bytes));
  const parts: Uint8Array[] = [];
  let position = XERIAL_HEADER_BYTES;
  while (position < bytes.length) {
    if (position + LENGTH_BYTES > bytes.length)
      throw new Error(`xerial snappy frame truncated at byte ${position}`);
    const length = bytes.readUInt32BE(position);
    position += LENGTH_BYTES;
    if (position + length > bytes.length) {
      throw new Error(
        `xerial snappy block of ${length} bytes at byte ${position} overruns the frame (${bytes.length} bytes)`,
      );
    }
    parts.push(block(bytes.subarray(position, position + length)));
    position += length;
  }
  return Buffer.concat(parts);
}
