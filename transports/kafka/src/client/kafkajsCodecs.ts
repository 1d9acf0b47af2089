import { CompressionCodecs, CompressionTypes } from 'kafkajs';
import { decodeBatch, UndecodableBatchError } from '../codecs/decoders';

interface KafkajsCodec {
  compress(encoder: { buffer: Buffer }): Promise<Buffer>;
  decompress(buffer: Buffer): Promise<Buffer>;
}
type CodecFactory = () => KafkajsCodec;

/** kafkajs's codec registry, by codec id (its type lists ids 1–4 only). */
const registry = CompressionCodecs as unknown as Record<number, CodecFactory | undefined>;

/** Codec ids a record batch's attributes can hold (3 bits) that Kafka does not define. */
const UNDEFINED_CODEC_IDS = [5, 6, 7] as const;

function decoderOnly(decompress: (buffer: Buffer) => Buffer, name: string): CodecFactory {
  const codec: KafkajsCodec = {
    compress: () =>
      Promise.reject(
        new Error(`ferry registers a ${name} decoder only: kafkajs cannot compress with ${name} here`),
      ),
    decompress: async (buffer) => decompress(buffer),
  };
  return () => codec;
}

/**
 * Whether `id` still holds kafkajs's own placeholder (a factory that throws
 * KafkaJSNotImplemented) or nothing: only then does ferry register its codec, so a codec the
 * application registered (kafkajs-snappy, kafkajs-lz4, …) is kept.
 */
function unregistered(id: number): boolean {
  const factory = registry[id];
  if (factory === undefined) return true;
  try {
    factory();
    return false;
  } catch (error) {
    return (error as { name?: unknown }).name === 'KafkaJSNotImplemented';
  }
}

let registered = false;

/**
 * Registers ferry's snappy, lz4 and zstd decoders in kafkajs's process-global `CompressionCodecs`
 * where the application registered none, and for the ids Kafka does not define a decoder that
 * fails with an UndecodableBatchError (kafkajs would otherwise read such a batch as
 * uncompressed records). Once per process.
 */
export function registerKafkajsCodecs(): void {
  if (registered) return;
  registered = true;
  const codecs = [
    [CompressionTypes.Snappy, 'snappy'],
    [CompressionTypes.LZ4, 'lz4'],
    [CompressionTypes.ZSTD, 'zstd'],
  ] as const;
  for (const [id, name] of codecs) {
    if (unregistered(id)) registry[id] = decoderOnly((buffer) => decodeBatch(name, buffer), name);
  }
  for (const id of UNDEFINED_CODEC_IDS) {
    const name = `codec ${id}`;
    if (unregistered(id))
      registry[id] = decoderOnly(() => {
        throw new UndecodableBatchError(name, new Error(`Kafka defines no compression codec ${id}`));
      }, name);
  }
}
