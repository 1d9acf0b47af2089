import { FerryError } from '@ferry/core';
import type { DriverAdmin } from './client/types';
import type { KafkaConnection } from './connection';
import { describeCauses, operatorRefusal, transportError } from './errors';

/**
 * A failed start only an operator can fix (operatorRefusal) as ready()'s FERRY_PERMANENT_FAILURE,
 * naming the consumed topics and the refusal; null for a failure a retry may fix.
 */
export function startRefusal(error: unknown, topics: readonly string[]): FerryError | null {
  const refusal = operatorRefusal(error);
  if (refusal === null) return null;
  return new FerryError(
    'FERRY_PERMANENT_FAILURE',
    `Kafka refused the consumer of ${topics.join(', ')} (${refusal}): ${describeCauses(error)}`,
    { cause: error, details: { topics: [...topics] } },
  );
}

export interface StartCheck {
  /** Dead-letter topics not in the cluster's topic list, each with its source topic. */
  readonly missingDeadLetterTopics: readonly string[];
  /**
   * Dead-letter topics whose cleanup.policy includes `compact`: there, dead letters with the same
   * key replace each other (a keyed copy keeps its record's key), and a copy whose value had to
   * be left out is a tombstone that deletes the key's earlier dead letters.
   */
  readonly compactedDeadLetterTopics: readonly string[];
}

/** The dead-letter topic of `topic`, or null when the function throws (its send reports that). */
function deadLetterOf(deadLetterTopic: (sourceTopic: string) => string, topic: string): string | null {
  try {
    return deadLetterTopic(topic);
  } catch {
    return null;
  }
}

/**
 * The topics of `topics` that are compacted, as far as the broker says: a client without the
 * DescribeConfigs permission learns nothing, and the start goes on (this is a warning only).
 */
async function compacted(admin: DriverAdmin, topics: readonly string[]): Promise<string[]> {
  if (topics.length === 0) return [];
  try {
    const policies = await admin.cleanupPolicies(topics);
    return topics.filter((topic) =>
      (policies.get(topic) ?? '').split(',').some((p) => p.trim() === 'compact'),
    );
  } catch {
    return [];
  }
}

/**
 * Checks, before a session starts, that every consumed topic and its dead-letter topic exist. A
 * missing consumed topic throws a FERRY_TRANSPORT_ERROR naming it (`details.missingTopics`): the
 * start would fail without saying which topic; the consumer retries the start (the topic may be
 * created later) and ready() names the error once its timeout passes. A topic an ACL hides from
 * this client (no Describe) is not listed either: the error says so. Missing dead-letter topics
 * are returned, not thrown: a broker with `auto.create.topics.enable` (Kafka's default) creates
 * one at the first dead letter, so the consumer starts and the caller warns; on a broker that
 * does not, the first rejected record holds its partition until the topic exists. A dead-letter
 * topic whose function throws is not checked here (its send fails with that FerryConfigError).
 */
export async function checkTopicsExist(
  connection: KafkaConnection,
  topics: readonly string[],
  deadLetterTopic: (sourceTopic: string) => string,
  signal: AbortSignal,
  /** The consumer's (clientRetryCeilingMs of its closeTimeoutMs). */
  retryCeilingMs: number,
): Promise<StartCheck> {
  let existing: Set<string>;
  let compactedDeadLetterTopics: readonly string[] = [];
  try {
    const admin = await connection.driver.admin(signal, retryCeilingMs);
    try {
      existing = new Set(await admin.listTopics());
      const deadLetterTopics = [...new Set(topics.map((topic) => deadLetterOf(deadLetterTopic, topic)))];
      compactedDeadLetterTopics = await compacted(
        admin,
        deadLetterTopics.filter((topic): topic is string => topic !== null && existing.has(topic)),
      );
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  } catch (error) {
    throw transportError('listing the consumed and dead-letter topics failed', error);
  }
  const missing: string[] = [];
  const missingDeadLetterTopics: string[] = [];
  for (const topic of topics) {
    if (!existing.has(topic)) missing.push(`${topic} (consumed)`);
    const dead = deadLetterOf(deadLetterTopic, topic);
    if (dead !== null && !existing.has(dead))
      missingDeadLetterTopics.push(`${dead} (the dead-letter topic of ${topic})`);
  }
  if (missing.length === 0) return { missingDeadLetterTopics, compactedDeadLetterTopics };
  throw new FerryError(
    'FERRY_TRANSPORT_ERROR',
    `Kafka topics missing: ${missing.join(', ')} (not in the cluster's topic list: absent, or hidden ` +
      `from this client by an ACL without Describe); the consumer starts once they exist (ensureTopics)`,
    { details: { missingTopics: missing } },
  );
}
