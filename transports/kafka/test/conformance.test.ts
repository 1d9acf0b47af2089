/**
 * The shared transport conformance suite from @ferry/testing, run against the project's Kafka.
 * Each case gets its own topic, dead-letter topic and consumer group.
 */
import { FERRY_HEADERS } from '@ferry/core';
import {
  runTransportConformance,
  type DeadLetter,
  type TransportContext,
  type TransportUnderTest,
} from '@ferry/testing/conformance';
import type { Consumer } from 'kafkajs';
import {
  KafkaPublisher,
  attachKafkaConsumer,
  deleteGroups,
  deleteTopics,
  ensureTopics,
  type KafkaInboxConsumer,
} from '../src';
import { fastGroup, groupLag, testConnection, uniqueName } from './support';

const connection = testConnection();

async function createTransport({ publisherObserver }: TransportContext): Promise<TransportUnderTest> {
  const topic = uniqueName('conformance');
  const deadLetterTopic = `${topic}.dlq`;
  // One consumer group per case, as an application's consumers share theirs: the next consumer
  // attached resumes where the group committed, so what a closed one did not commit comes back.
  const groupId = uniqueName('conformance-group');
  const groupIds: string[] = [groupId];
  await ensureTopics(connection, [{ topic, partitions: 3 }, { topic: deadLetterTopic }]);
  const publisher = new KafkaPublisher(connection, {
    confirmTimeoutMs: 5_000,
    producerRetries: 2,
    observer: publisherObserver,
  });
  const raw = connection.kafka.producer({ allowAutoTopicCreation: false });
  await raw.connect();
  const consumers: KafkaInboxConsumer[] = [];
  const deadLetters: DeadLetter[] = [];
  let deadLetterReader: Consumer | null = null;

  const startDeadLetterReader = async (): Promise<void> => {
    const groupId = uniqueName('conformance-dlq');
    groupIds.push(groupId);
    const reader = connection.kafka.consumer({
      groupId,
      sessionTimeout: 6_000,
      heartbeatInterval: 300,
      maxWaitTimeInMs: 100,
    });
    deadLetterReader = reader;
    await reader.connect();
    await reader.subscribe({ topics: [deadLetterTopic], fromBeginning: true });
    await reader.run({
      eachMessage: async ({ message }) => {
        const header = (name: string) => message.headers?.[name]?.toString() ?? null;
        deadLetters.push({
          messageId: header(FERRY_HEADERS.messageId),
          reason: header(FERRY_HEADERS.rejectReason),
        });
      },
    });
  };

  return {
    publisher,
    destination: topic,
    source: topic,
    unroutableDestination: uniqueName('no-such-topic'),
    async attach(acceptor, { consumer, observer }) {
      const handle = attachKafkaConsumer(acceptor, {
        connection,
        topic,
        groupId,
        consumer,
        observer,
        ...fastGroup,
        maxWaitTimeMs: 200,
        retryBackoff: { initialMs: 50, maxMs: 500 },
      });
      consumers.push(handle);
      await handle.ready();
      return handle;
    },
    async publishRaw(message) {
      const headers: Record<string, string> = { ...message.headers };
      if (message.messageId !== undefined) headers[FERRY_HEADERS.messageId] = message.messageId;
      await raw.send({ topic, acks: -1, messages: [{ value: message.body, headers }] });
    },
    async readDeadLetters() {
      if (deadLetterReader === null) await startDeadLetterReader();
      return [...deadLetters];
    },
    heldCount: () => groupLag(connection, groupId, topic),
    async cleanup() {
      await Promise.all(consumers.map((consumer) => consumer.close()));
      await Promise.all([publisher.close(), raw.disconnect(), deadLetterReader?.disconnect()]);
      await deleteGroups(connection, groupIds);
      await deleteTopics(connection, [topic, deadLetterTopic]);
    },
  };
}

runTransportConformance({
  name: 'kafka',
  transport: 'kafka',
  system: 'kafka',
  features: {
    deadLetter: true,
    orderingPerKey: true,
    redeliveryAfterRestart: {
      unsupported:
        'the Kafka node is shared with other suites, so restarting it belongs to the fault suite (fault-tests/broker-recovery)',
    },
    unroutableDetection: true,
    heldCount: true,
  },
  createTransport,
  timeoutMs: 40_000,
});
