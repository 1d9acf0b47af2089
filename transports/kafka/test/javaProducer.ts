import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { brokers } from './support';

/** Kafka's compression.type values, as the Java client names them. */
export type JavaCodec = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';

/** The deadline of one run of the Java producer (the source launcher compiles it first). */
const JAVA_TIMEOUT_MS = 90_000;

/**
 * The kafka-clients jars of the project's Kafka, where scripts/services put them:
 * FERRY_KAFKA_LIBS, else <FERRY_SERVICES_DIR or <repo>/.services>/kafka/libs.
 */
export function kafkaLibs(): string {
  const services = process.env.FERRY_SERVICES_DIR ?? path.resolve(__dirname, '../../../.services');
  const libs = process.env.FERRY_KAFKA_LIBS ?? path.join(services, 'kafka', 'libs');
  if (!existsSync(libs)) {
    throw new Error(`no Kafka jars at ${libs}: run scripts/services up kafka, or set FERRY_KAFKA_LIBS`);
  }
  return libs;
}

/**
 * Produces with the real Java client (test/java/CompressedProducer.java, run with the source
 * launcher): for each codec, `count` records to partition 0 of `topic` in one batch compressed
 * with it, message ids `<codec>-<i>`, tenant header `tenant`. Resolves once the producer flushed
 * and exited; rejects on a non-zero exit or after JAVA_TIMEOUT_MS (the process is killed).
 */
export function produceWithJava(
  topic: string,
  tenant: string,
  count: number,
  codecs: readonly JavaCodec[],
): Promise<void> {
  const source = path.join(__dirname, 'java', 'CompressedProducer.java');
  const args = [
    '-cp',
    `${kafkaLibs()}${path.sep}*`,
    source,
    brokers().join(','),
    topic,
    tenant,
    String(count),
    ...codecs,
  ];
  return new Promise((resolve, reject) => {
    execFile('java', args, { timeout: JAVA_TIMEOUT_MS, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      if (error) reject(new Error(`java CompressedProducer failed (${error.message}): ${stderr || stdout}`));
      else resolve();
    });
  });
}
