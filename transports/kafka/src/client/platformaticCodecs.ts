import { decodeBatch, undecodableOnFailure } from '../codecs/decoders';
import { isXerialFramed, unframeSnappy } from '../codecs/xerial';
import type { PlatformaticKafka } from './platformaticTypes';

type Decompress = (data: Buffer | { readonly buffer: Buffer }) => Buffer;
interface AlgorithmEntry {
  decompressSync: Decompress;
}

const DECORATED = Symbol.for('ferry.kafka.decompress');

/** The code of the client's UnsupportedCompressionError (zstd on a Node without it). */
export const UNSUPPORTED_COMPRESSION = 'PLT_KFK_UNSUPPORTED_COMPRESSION';

const bytesOf = (data: Buffer | { readonly buffer: Buffer }): Buffer =>
  Buffer.isBuffer(data) ? data : data.buffer;

/**
 * @platformatic/kafka decodes record batches through its exported `compressionsAlgorithms`
 * table (no documented hook). ferry decorates its entries once, when it loads the client:
 * - snappy: the client's own (wasm) decoder reads one raw block, not the xerial frames the Java
 *   client writes, so a framed payload is unframed first and each block goes to the client's
 *   decoder;
 * - zstd: on a Node without `zlib.zstdDecompressSync` (Node 20) the client's decoder throws its
 *   UnsupportedCompressionError, and ferry's decoder (fzstd) decodes the batch instead; on Node
 *   22.15+ (or with a decoder the application put there before) the one in place decodes.
 * Every decoder failure of those entries and of lz4 becomes an UndecodableBatchError. A table
 * the client froze is left alone, with the client's own decoders and errors (zstd on Node 20:
 * its UnsupportedCompressionError, which the consumer treats as undecodable too).
 */
export function decoratePlatformaticCodecs(kafka: PlatformaticKafka): void {
  const table = kafka.compressionsAlgorithms as unknown as Record<string, AlgorithmEntry | undefined>;
  decorate(
    table.snappy,
    (own) => (data) =>
      undecodableOnFailure('snappy', () => {
        const bytes = bytesOf(data);
        return isXerialFramed(bytes) ? unframeSnappy(bytes, (raw) => own(Buffer.from(raw))) : own(bytes);
      }),
  );
  decorate(table.lz4, (own) => (data) => undecodableOnFailure('lz4', () => own(data)));
  decorate(
    table.zstd,
    (own) => (data) =>
      undecodableOnFailure('zstd', () => {
        try {
          return own(data);
        } catch (error) {
          if ((error as { code?: unknown }).code !== UNSUPPORTED_COMPRESSION) throw error;
          return decodeBatch('zstd', bytesOf(data));
        }
      }),
  );
}

function decorate(entry: AlgorithmEntry | undefined, wrap: (own: Decompress) => Decompress): void {
  if (entry === undefined) return;
  const own = entry.decompressSync;
  if ((own as { [DECORATED]?: unknown })[DECORATED] === true) return;
  const decorated = Object.assign(wrap(own), { [DECORATED]: true });
  try {
    entry.decompressSync = decorated;
  } catch {
    // A frozen table (a later client version): its own decoders and errors stay.
  }
}
