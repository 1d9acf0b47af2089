import { settlesWithin } from '@ferry/core/transport';
import { deleteGroups, deleteTopics, KafkaConnection } from '@ferry/kafka';

/** The topic where the downstream consumer dead-letters the events of `topic` it cannot accept. */
export function deadLetterTopic(topic: string): string {
  return `${topic}.dlq`;
}

/** How long removing the run's topics and groups may take before the run goes on without it. */
const REMOVAL_MS = 45_000;

/**
 * Deletes the Kafka topics and consumer groups a run created, once nothing uses them. Never
 * rejects: a failure (or a removal not done within 45 s) is written to stderr, and the run's own
 * result or error stays the one reported.
 */
export async function removeRunTopics(
  brokers: readonly string[],
  topics: readonly string[],
  groups: readonly string[],
): Promise<void> {
  const warn = (why: string) =>
    process.stderr.write(`ferry demo: could not delete its Kafka topics ${topics.join(', ')}: ${why}\n`);
  const kafka = new KafkaConnection({ brokers, clientId: 'ferry-demo-cleanup', kafkaLogLevel: 'nothing' });
  const removal = (async () => {
    await deleteTopics(kafka, topics);
    await deleteGroups(kafka, groups);
  })();
  try {
    if (!(await settlesWithin(removal, REMOVAL_MS))) warn(`not done within ${REMOVAL_MS} ms`);
    else await removal;
  } catch (error) {
    warn(error instanceof Error ? error.message : String(error));
  }
}
