import { FerryError } from '@ferry/core';
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
): Promise<{ readonly missingDeadLetterTopics: readonly string[] }> {
  let existing: Set<string>;
  try {
    const admin = await connection.driver.admin(signal);
    try {
      existing = new Set(await admin.listTopics());
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
    let dead: string | null = null;
    try {
      dead = deadLetterTopic(topic);
    } catch {
      // Reported by the dead-letter send that needs it.
    }
    if (dead !== null && !existing.has(dead))
      missingDeadLetterTopics.push(`${dead} (the dead-letter topic of ${topic})`);
  }
  if (missing.length === 0) return { missingDeadLetterTopics };
  throw new FerryError(
    'FERRY_TRANSPORT_ERROR',
    `Kafka topics missing: ${missing.join(', ')} (not in the cluster's topic list: absent, or hidden ` +
      `from this client by an ACL without Describe); the consumer starts once they exist (ensureTopics)`,
    { details: { missingTopics: missing } },
  );
}
