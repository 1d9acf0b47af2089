import path from 'node:path';
import { REPOSITORY_ROOT, mavenJars, runJavaSource } from '../../../test-support/javaClients';
import { brokers } from './support';

const SOURCE = path.join(__dirname, 'java', 'ForeignProducer.java');

/** The compression codecs Kafka defines. */
export type Codec = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';

/** A record for the Java client; null stands for a null key, value or header value. */
export interface ForeignRecord {
  /**
   * 'keyed' sends the record to the partition the Java client's default partitioner chooses for
   * its key (the others go to partition 0); 'commit' and 'abort' send the record in a transaction
   * of its own and end it so; 'open:SECONDS' sends the record in a transaction of its own left
   * open (the partition's last stable offset held before it) while the later records are sent,
   * and aborts it SECONDS after it was sent, before the run ends; 'batched'
   * records go out at the end, after the others, together in one record batch (compressed as
   * one). Default 'plain'.
   */
  readonly mode?: 'plain' | 'keyed' | 'commit' | 'abort' | 'batched' | `open:${number}`;
  /**
   * For 'batched' records: the codec of their batch, instead of the run's. Each codec's records
   * form a batch of their own, sent in the order the codecs first appear.
   */
  readonly codec?: Codec;
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
function clientLibs(): Promise<string> {
  const libs = process.env.FERRY_KAFKA_LIBS ?? path.join(REPOSITORY_ROOT, '.services', 'kafka', 'libs');
  return mavenJars(path.join(REPOSITORY_ROOT, 'scripts', 'kafka', 'pom.xml'), libs);
}

function field(text: string | null | undefined): string {
  if (text === null || text === undefined) return '\\N';
  if (/[\t\n\r]/.test(text) || text === '\\N') throw new Error(`not a plain field: ${JSON.stringify(text)}`);
  return text;
}

function modeField(record: ForeignRecord): string {
  if (record.codec === undefined) return record.mode ?? 'plain';
  if (record.mode !== 'batched')
    throw new Error(`a codec is for batched records, not ${record.mode ?? 'plain'}`);
  return `batched:${record.codec}`;
}

/** Records for one topic, in a run of the Java client that produces to several. */
export interface ForeignTopicRecords {
  readonly topic: string;
  readonly records: readonly ForeignRecord[];
}

/**
 * Produces `records`, in order, to partition 0 of `topic` (a 'keyed' record: where its key goes) with the Java client (kafka-clients, run
 * with Java's source launcher), compressed with `compression`. Resolves once every record was acknowledged.
 */
export function produceWithJava(
  topic: string,
  records: readonly ForeignRecord[],
  compression: Codec = 'none',
): Promise<void> {
  return produceToTopicsWithJava([{ topic, records }], compression);
}

/**
 * produceWithJava for several topics in one run of the Java client: a JVM start (~1 s of CPU)
 * for all of them. The topics' records go out in the order given ('batched' ones at the end of the
 * run, a transaction left 'open' the run's only one while open).
 */
export async function produceToTopicsWithJava(
  topics: readonly ForeignTopicRecords[],
  compression: Codec = 'none',
): Promise<void> {
  const [first] = topics;
  if (first === undefined) return;
  const libs = await clientLibs();
  const lines = topics.flatMap(({ topic, records }) => [
    `@topic\t${field(topic)}`,
    ...records.map((record) =>
      [
        modeField(record),
        field(record.key),
        field(record.value),
        ...(record.headers ?? []).map(([name, value]) => `${field(name)}=${field(value)}`),
      ].join('\t'),
    ),
  ]);
  await runJavaSource(libs, SOURCE, [brokers().join(','), first.topic, compression], {
    input: `${lines.join('\n')}\n`,
  });
}
