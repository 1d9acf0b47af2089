import { checkKafkaConnection } from './options';
import { FerryConfigError } from '@ferry/core';
import type { DriverAdmin } from './client/types';
import type { KafkaConnection } from './connection';
import { transportError } from './errors';
import {
  integerOption as integer,
  knownKeysOption,
  nonEmptyOption as nonEmpty,
  type OptionKeys,
} from '@ferry/core/transport';

export interface TopicSpec {
  readonly topic: string;
  /** Default 1. Per-key order holds within a partition, so keys spread over partitions. */
  readonly partitions?: number;
  /** Default 1 (a single-node cluster); production clusters want 3. */
  readonly replicationFactor?: number;
  /** Topic-level configs, e.g. `{ 'min.insync.replicas': '2' }`. */
  readonly configs?: Readonly<Record<string, string>>;
}

const TOPIC_SPEC_KEYS = {
  topic: true,
  partitions: true,
  replicationFactor: true,
  configs: true,
} as const satisfies OptionKeys<TopicSpec>;

async function withAdmin<T>(
  connection: KafkaConnection,
  work: (admin: DriverAdmin) => Promise<T>,
): Promise<T> {
  checkKafkaConnection(connection);
  const admin = await connection.driver.admin();
  try {
    return await work(admin);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/**
 * Creates the topics that do not exist yet and waits for their leaders; existing topics are
 * left as they are. Resolves with the names it created. Specs are checked first: a key it does
 * not know is a FerryConfigError naming it (`topics[i].numPartitions`).
 */
export async function ensureTopics(
  connection: KafkaConnection,
  specs: readonly TopicSpec[],
): Promise<string[]> {
  const topics = specs.map((spec, index) => {
    spec = knownKeysOption(`topics[${index}].`, spec, TOPIC_SPEC_KEYS);
    return {
      topic: nonEmpty(`topics[${index}].topic`, spec.topic),
      numPartitions: integer(`topics[${index}].partitions`, spec.partitions ?? 1, 1),
      replicationFactor: integer(`topics[${index}].replicationFactor`, spec.replicationFactor ?? 1, 1),
      configEntries: Object.entries(spec.configs ?? {}).map(([name, value]) => ({ name, value })),
    };
  });
  try {
    return await withAdmin(connection, async (admin) => {
      const existing = new Set(await admin.listTopics());
      const missing = topics.filter((topic) => !existing.has(topic.topic));
      if (missing.length === 0) return [];
      await admin.createTopics(missing);
      return missing.map((topic) => topic.topic);
    });
  } catch (error) {
    // A missing optional peer (@platformatic/kafka) is the FerryConfigError naming it, never a
    // retriable broker failure a start-up loop would retry for ever (review 44).
    if (error instanceof FerryConfigError) throw error;
    throw transportError('creating Kafka topics failed', error);
  }
}

/** How long deleteTopics waits for the cluster's metadata to stop listing the deleted topics. */
const DELETION_VISIBLE_MS = 30_000;
const DELETION_POLL_MS = 50;

/**
 * Deletes the topics that exist among `topics` (for tests and teardown), and resolves once the
 * cluster's metadata no longer lists them: the controller answers a deletion before the brokers
 * applied it, and a publish in between is still confirmed. A deletion not visible within 30 s
 * is a transport error naming the topics still listed.
 */
export async function deleteTopics(connection: KafkaConnection, topics: readonly string[]): Promise<void> {
  try {
    await withAdmin(connection, async (admin) => {
      const existing = new Set(await admin.listTopics());
      const present = topics.filter((topic) => existing.has(topic));
      if (present.length === 0) return;
      await admin.deleteTopics(present);
      await untilUnlisted(admin, present);
    });
  } catch (error) {
    if (error instanceof FerryConfigError) throw error;
    throw transportError('deleting Kafka topics failed', error);
  }
}

async function untilUnlisted(admin: DriverAdmin, topics: readonly string[]): Promise<void> {
  const deadline = performance.now() + DELETION_VISIBLE_MS;
  for (;;) {
    const listed = new Set(await admin.listTopics());
    const left = topics.filter((topic) => listed.has(topic));
    if (left.length === 0) return;
    if (performance.now() >= deadline) {
      throw new Error(
        `the cluster still lists ${left.join(', ')} ${DELETION_VISIBLE_MS} ms after deleting it`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, DELETION_POLL_MS));
  }
}

/** Deletes consumer groups (for tests and teardown); a group with live members is left alone. */
export async function deleteGroups(connection: KafkaConnection, groupIds: readonly string[]): Promise<void> {
  if (groupIds.length === 0) return;
  await withAdmin(connection, async (admin) => {
    await admin.deleteGroups(groupIds).catch(() => undefined);
  });
}
