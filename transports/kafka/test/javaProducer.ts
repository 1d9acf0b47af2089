import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { brokers } from './support';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../../..');
const SOURCE = path.join(__dirname, 'java', 'ForeignProducer.java');

/** A record for the Java client; null stands for a null key, value or header value. */
export interface ForeignRecord {
  /** 'commit' and 'abort' send the record in a transaction of its own and end it so. Default 'plain'. */
  readonly mode?: 'plain' | 'commit' | 'abort';
  readonly key?: string | null;
  readonly value: string | null;
  /** In order; a name may repeat. */
  readonly headers?: readonly (readonly [string, string | null])[];
}

/**
 * The jars of the official Java client (kafka-clients and its codecs), as scripts/services fetches
 * them for the broker: FERRY_KAFKA_LIBS, else .services/kafka/libs, downloaded from Maven Central
 * there when a broker started elsewhere left none.
 */
async function clientLibs(): Promise<string> {
  const libs = process.env.FERRY_KAFKA_LIBS ?? path.join(ROOT, '.services', 'kafka', 'libs');
  if (existsSync(path.join(libs, '.complete'))) return libs;
  const tmp = `${libs}.tmp.${process.pid}`;
  await rm(tmp, { recursive: true, force: true });
  const pom = path.join(ROOT, 'scripts', 'kafka', 'pom.xml');
  await run(
    'mvn',
    [
      '-B',
      '-q',
      '-f',
      pom,
      'dependency:copy-dependencies',
      '-DincludeScope=runtime',
      `-DoutputDirectory=${tmp}`,
    ],
    {
      timeout: 300_000,
    },
  );
  await rename(tmp, libs).catch(async (error: unknown) => {
    await rm(tmp, { recursive: true, force: true });
    if (!existsSync(libs)) throw error;
  });
  return libs;
}

function field(text: string | null | undefined): string {
  if (text === null || text === undefined) return '\\N';
  if (/[\t\n\r]/.test(text) || text === '\\N') throw new Error(`not a plain field: ${JSON.stringify(text)}`);
  return text;
}

/**
 * Produces `records`, in order, to partition 0 of `topic` with the Java client (kafka-clients, run
 * with Java's source launcher), compressed with `compression`. Resolves once every record was acknowledged.
 */
export async function produceWithJava(
  topic: string,
  records: readonly ForeignRecord[],
  compression: 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd' = 'none',
): Promise<void> {
  const libs = await clientLibs();
  const lines = records.map((record) =>
    [
      record.mode ?? 'plain',
      field(record.key),
      field(record.value),
      ...(record.headers ?? []).map(([name, value]) => `${field(name)}=${field(value)}`),
    ].join('\t'),
  );
  const child = run('java', ['-cp', path.join(libs, '*'), SOURCE, brokers().join(','), topic, compression], {
    timeout: 120_000,
  });
  child.child.stdin?.end(`${lines.join('\n')}\n`);
  await child;
}
