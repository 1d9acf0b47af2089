import zlib from 'node:zlib';
import { decompress as zstdDecompress } from 'fzstd';
import { unframeSnappy } from './xerial';

/**
 * ferry's decoders for the codecs Kafka defines beyond gzip (which both clients read
 * themselves), pure JavaScript so that they install from the registry tarball on any platform
 * and run synchronously (@platformatic/kafka decodes synchronously): snappyjs (raw snappy
 * blocks, in xerial frames or alone), lz4js (LZ4 frames, as Kafka writes them since record
 * batches v2), fzstd (zstd frames), or Node's own zstd where it has one (22.15+).
 */
interface SnappyJs {
  uncompress(compressed: Uint8Array): Uint8Array;
}
interface Lz4Js {
  decompress(frame: Uint8Array): Uint8Array;
}
// CommonJS packages without type declarations; typed here by what ferry uses of them.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const snappyjs = require('snappyjs') as SnappyJs;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const lz4js = require('lz4js') as Lz4Js;

/** Kafka's codec ids (the low 3 bits of a record batch's attributes). */
export const KAFKA_CODEC_IDS = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 } as const;

export type KafkaCodecName = keyof typeof KAFKA_CODEC_IDS;

/** How an UndecodableBatchError's message, and so the consumer's `disconnected` event for it, begins. */
export const UNDECODABLE_BATCH = 'undecodable record batch';

/**
 * A record batch the consumer's client cannot decompress (a codec id Kafka does not define, or
 * bytes the codec refuses). Thrown inside the client's fetch, so the client fails the whole
 * fetch; ferry's consumer finds it among the causes of the crash (`undecodableBatch`).
 */
export class UndecodableBatchError extends Error {
  override readonly name = 'UndecodableBatchError';
  /** A codec name, or `codec <id>` for an id Kafka does not define. */
  readonly codec: string;
  /**
   * Read by kafkajs's retrier: the same bytes fail the same way on every fetch, so the client
   * does not fetch them again five times over (about 12 s) before it crashes; ferry's session
   * loop alone waits, with its growing backoff.
   */
  readonly retriable = false;

  constructor(codec: string, cause?: unknown) {
    const detail = cause instanceof Error ? `: ${cause.message}` : '';
    super(`${UNDECODABLE_BATCH} (${codec})${detail}`, { cause });
    this.codec = codec;
  }
}

type Decode = (compressed: Uint8Array) => Buffer;

const nodeZstd = (zlib as { zstdDecompressSync?: (data: Uint8Array) => Buffer }).zstdDecompressSync;

const DECODERS: Readonly<Record<'snappy' | 'lz4' | 'zstd', Decode>> = {
  snappy: (data) => unframeSnappy(data, (raw) => snappyjs.uncompress(raw)),
  lz4: (data) => Buffer.from(lz4js.decompress(data)),
  zstd: (data) => (nodeZstd ? nodeZstd(data) : Buffer.from(zstdDecompress(data))),
};

/** Decodes `data` with `codec`; any failure is an UndecodableBatchError naming the codec. */
export function decodeBatch(codec: keyof typeof DECODERS, data: Uint8Array): Buffer {
  return undecodableOnFailure(codec, () => DECODERS[codec](data));
}

/** Runs `decode`; a failure becomes an UndecodableBatchError naming `codec`. */
export function undecodableOnFailure<T>(codec: string, decode: () => T): T {
  try {
    return decode();
  } catch (error) {
    if (error instanceof UndecodableBatchError) throw error;
    throw new UndecodableBatchError(codec, error);
  }
}
