/** What a run left on Kafka: the topics and consumer groups whose names hold its run id. */
import { Kafka, logLevel } from 'kafkajs';

/** How long a broker that answers "not now" (a retriable error) is asked again. */
const RETRY_FOR_MS = 60_000;

/**
 * The topics and `group <id>`s holding `runId`. A retriable answer (a broker just started: "the
 * coordinator is loading", failed a full CI run once) is asked again for up to RETRY_FOR_MS.
 */
export async function kafkaLeftovers(brokers: readonly string[], runId: string): Promise<string[]> {
  const until = Date.now() + RETRY_FOR_MS;
  for (;;) {
    try {
      return await readLeftovers(brokers, runId);
    } catch (error) {
      const retriable = (error as { retriable?: unknown } | null)?.retriable === true;
      if (!retriable || Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

async function readLeftovers(brokers: readonly string[], runId: string): Promise<string[]> {
  const kafka = new Kafka({
    clientId: 'ferry-examples-leftovers',
    brokers: [...brokers],
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const topics = await admin.listTopics();
    const { groups } = await admin.listGroups();
    return [...topics, ...groups.map((g) => `group ${g.groupId}`)].filter((name) => name.includes(runId));
  } finally {
    await admin.disconnect();
  }
}
