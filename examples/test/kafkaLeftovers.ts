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

/**
 * Waits until a topic holding `runId` exists (a run's app has started), asking one admin client
 * every `everyMs` until `deadline` (epoch ms), then throws. One connection for the whole wait: a
 * new client per look (kafkaLeftovers) cost a connection and a metadata exchange every 100 ms of a
 * child's start-up.
 */
export async function untilRunTopic(
  brokers: readonly string[],
  runId: string,
  deadline: number,
  everyMs = 100,
): Promise<void> {
  const admin = adminOf(brokers);
  await admin.connect();
  try {
    for (;;) {
      try {
        if ((await admin.listTopics()).some((topic) => topic.includes(runId))) return;
      } catch (error) {
        if ((error as { retriable?: unknown } | null)?.retriable !== true) throw error;
      }
      if (Date.now() > deadline) throw new Error(`no topic of run ${runId} on Kafka by the deadline`);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  } finally {
    await admin.disconnect();
  }
}

function adminOf(brokers: readonly string[]) {
  return new Kafka({
    clientId: 'ferry-examples-leftovers',
    brokers: [...brokers],
    logLevel: logLevel.NOTHING,
  }).admin();
}

async function readLeftovers(brokers: readonly string[], runId: string): Promise<string[]> {
  const admin = adminOf(brokers);
  await admin.connect();
  try {
    const topics = await admin.listTopics();
    const { groups } = await admin.listGroups();
    return [...topics, ...groups.map((g) => `group ${g.groupId}`)].filter((name) => name.includes(runId));
  } finally {
    await admin.disconnect();
  }
}
