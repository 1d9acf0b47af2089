/**
 * ferry's decoders for compressed record batches, without a broker: the xerial snappy framing of
 * the Java client, typed failures, and registration that keeps the application's own codecs.
 * (compressed.test.ts reads batches the real Java client wrote, on both clients.)
 */
import { gzipSync } from 'node:zlib';
import { CompressionCodecs, CompressionTypes } from 'kafkajs';
import { MultipleErrors, UnsupportedCompressionError } from '@platformatic/kafka';
import { decodeBatch, UNDECODABLE_BATCH, UndecodableBatchError } from '../src/codecs/decoders';
import { isXerialFramed, unframeSnappy } from '../src/codecs/xerial';
import { registerKafkajsCodecs } from '../src/client/kafkajsCodecs';
import { decoratePlatformaticCodecs } from '../src/client/platformaticCodecs';
import type { PlatformaticKafka } from '../src/client/platformaticTypes';
import { undecodableBatch } from '../src/errors';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const snappyjs = require('snappyjs') as { compress(data: Uint8Array): Uint8Array };

const MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);

/** A payload framed the way snappy-java's SnappyOutputStream frames it, one block per part. */
function xerial(...parts: string[]): Buffer {
  const header = Buffer.concat([MAGIC, Buffer.from([0, 0, 0, 1, 0, 0, 0, 1])]);
  const blocks = parts.map((part) => {
    const block = Buffer.from(snappyjs.compress(Buffer.from(part)));
    const length = Buffer.alloc(4);
    length.writeUInt32BE(block.length);
    return Buffer.concat([length, block]);
  });
  return Buffer.concat([header, ...blocks]);
}

describe('snappy framing', () => {
  test('a xerial frame of several blocks decodes to their concatenation', () => {
    const framed = xerial('first block, ', 'second block');
    expect(isXerialFramed(framed)).toBe(true);
    expect(decodeBatch('snappy', framed).toString()).toBe('first block, second block');
  });

  test('a raw snappy block (librdkafka, Go clients) decodes as itself', () => {
    const raw = Buffer.from(snappyjs.compress(Buffer.from('one raw block')));
    expect(isXerialFramed(raw)).toBe(false);
    expect(decodeBatch('snappy', raw).toString()).toBe('one raw block');
  });

  test('a frame holding only its header is empty; a view into a larger buffer is read where it starts', () => {
    expect(decodeBatch('snappy', xerial()).length).toBe(0);
    const framed = xerial('inside');
    const larger = Buffer.concat([Buffer.from('prefix'), framed]);
    expect(unframeSnappy(larger.subarray(6), (raw) => Buffer.from(raw)).length).toBeGreaterThan(0);
    expect(decodeBatch('snappy', larger.subarray(6)).toString()).toBe('inside');
  });

  test('a block length that overruns the frame, or a truncated length, is an UndecodableBatchError naming snappy', () => {
    const framed = xerial('some text to frame');
    const overrun = Buffer.from(framed);
    overrun.writeUInt32BE(framed.length, 16);
    const truncated = framed.subarray(0, 18);
    for (const bad of [overrun, truncated]) {
      expect(() => decodeBatch('snappy', bad)).toThrow(UndecodableBatchError);
      expect(() => decodeBatch('snappy', bad)).toThrow(`${UNDECODABLE_BATCH} (snappy)`);
    }
  });
});

describe('decodeBatch', () => {
  test('bytes a codec refuses are an UndecodableBatchError with the codec and the cause', () => {
    const garbage = Buffer.from('not compressed at all');
    for (const codec of ['snappy', 'lz4', 'zstd'] as const) {
      let caught: unknown;
      try {
        decodeBatch(codec, garbage);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(UndecodableBatchError);
      expect((caught as UndecodableBatchError).codec).toBe(codec);
      expect((caught as UndecodableBatchError).cause).toBeInstanceOf(Error);
    }
  });

  test('undecodableBatch finds the error under a client wrapper, and nothing in an unrelated failure', () => {
    const inner = new UndecodableBatchError('lz4', new Error('bad'));
    const wrapped = Object.assign(new Error('fetch failed 4 times.'), { errors: [inner] });
    expect(undecodableBatch(new Error('outer', { cause: wrapped }))).toBe(inner);
    expect(undecodableBatch(new Error('Connection closed'))).toBeNull();
    // @platformatic/kafka's own, for a codec id Kafka does not define (or zstd on Node 20 untouched).
    const unsupported = new UnsupportedCompressionError('Unsupported compression algorithm with bitmask 5');
    expect(undecodableBatch(new MultipleErrors('fetch failed', [unsupported]))).toBe(unsupported);
  });
});

type Factory = () => { decompress(buffer: Buffer): Promise<Buffer> };

describe('kafkajs codec registry', () => {
  test("registers snappy, lz4 and zstd where kafkajs has its placeholder, keeps the application's codec, and fails undefined ids typed", async () => {
    const codecs = CompressionCodecs as unknown as Record<number, Factory | undefined>;
    const own: Factory = () => ({ decompress: async () => Buffer.from('the application decoded it') });
    codecs[CompressionTypes.LZ4] = own;
    registerKafkajsCodecs();

    expect(codecs[CompressionTypes.LZ4]).toBe(own);
    const snappy = codecs[CompressionTypes.Snappy]!();
    expect((await snappy.decompress(xerial('via kafkajs'))).toString()).toBe('via kafkajs');
    const gzip = codecs[CompressionTypes.GZIP]!();
    expect((await gzip.decompress(gzipSync('gzip stays kafkajs own'))).toString()).toBe(
      'gzip stays kafkajs own',
    );
    await expect(codecs[CompressionTypes.ZSTD]!().decompress(Buffer.from('garbage'))).rejects.toThrow(
      `${UNDECODABLE_BATCH} (zstd)`,
    );
    await expect(codecs[5]!().decompress(Buffer.from('x'))).rejects.toThrow(`${UNDECODABLE_BATCH} (codec 5)`);
  });
});

describe('@platformatic/kafka codec table', () => {
  type Entry = { decompressSync: (data: Buffer) => Buffer };
  const unsupported = () => {
    throw Object.assign(new Error('zstd is not supported in the current Node.js version'), {
      code: 'PLT_KFK_UNSUPPORTED_COMPRESSION',
    });
  };
  const fakeClient = (entries: Record<string, Entry>) =>
    ({ compressionsAlgorithms: entries }) as unknown as PlatformaticKafka;

  test("snappy unframes xerial for the client's own block decoder; zstd falls back to ferry's only where the client has none; once", () => {
    const blocks: number[] = [];
    const table: Record<string, Entry> = {
      snappy: {
        decompressSync: (data) => {
          blocks.push(data.length);
          return Buffer.from(`[${data.length}]`);
        },
      },
      lz4: { decompressSync: (data) => data },
      zstd: { decompressSync: unsupported },
    };
    decoratePlatformaticCodecs(fakeClient(table));
    const decorated = table.snappy!.decompressSync;
    decoratePlatformaticCodecs(fakeClient(table));
    expect(table.snappy!.decompressSync).toBe(decorated);

    const framed = xerial('a', 'bb');
    expect(table.snappy!.decompressSync(framed).toString()).toMatch(/^\[\d+\]\[\d+\]$/);
    expect(blocks).toHaveLength(2);
    expect(() => table.zstd!.decompressSync(Buffer.from('garbage'))).toThrow(UndecodableBatchError);
    expect(() => table.lz4!.decompressSync(Buffer.from('x'))).not.toThrow();
  });

  test('a zstd decoder that works (Node 22.15+, or the application’s) is kept, and its failures are typed', () => {
    const table: Record<string, Entry> = { zstd: { decompressSync: () => Buffer.from('own zstd') } };
    decoratePlatformaticCodecs(fakeClient(table));
    expect(table.zstd!.decompressSync(Buffer.from('anything')).toString()).toBe('own zstd');
    const failing: Record<string, Entry> = {
      zstd: {
        decompressSync: () => {
          throw new Error('corrupt');
        },
      },
    };
    decoratePlatformaticCodecs(fakeClient(failing));
    expect(() => failing.zstd!.decompressSync(Buffer.from('x'))).toThrow(
      `${UNDECODABLE_BATCH} (zstd): corrupt`,
    );
  });
});
