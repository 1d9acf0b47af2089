/** What a run left on Kafka: the topics and consumer groups whose names hold its run id. */
import { Kafka, logLevel } from 'kafkajs';

export async function kafkaLeftovers(brokers: readonly string[], runId: string): Promise<string[]> {
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
