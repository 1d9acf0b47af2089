import { outboxHeaders } from '@ferry/core/transport';
import {
  KafkaConnection,
  KafkaPublisher,
  deleteTopics,
  ensureTopics,
  type KafkaClientName,
} from '@ferry/kafka';
import { SERVICES, uniqueName } from '../env';
import { relayScenario, type RelayBroker } from './relay';

/**
 * Outbox → Kafka: KafkaPublisher on `client` vs a raw kafkajs idempotent producer (acks -1),
 * same batches; the baseline is the same for both clients, so their results compare directly.
 */
const relayKafkaOn = (client: KafkaClientName) =>
  relayScenario({
    name: client === 'kafkajs' ? 'relay-kafka' : `relay-kafka-${client}`,
    // Issue 13: at least 15,000 events/s and at least half the raw producer's rate.
    targets: [
      { on: 'subject', bound: 15_000 },
      { on: 'ratio', bound: 0.5 },
    ],
    baselineLabel: 'kafkajs idempotent producer, sendBatch acks -1',
    subjectLabel: `createRelay + KafkaPublisher (client: ${client})`,
    openBroker: () => openBroker(client),
  });

export const relayKafka = relayKafkaOn('kafkajs');
export const relayKafkaPlatformatic = relayKafkaOn('platformatic');

async function openBroker(client: KafkaClientName): Promise<RelayBroker> {
  const connection = new KafkaConnection({
    brokers: [...SERVICES.kafkaBrokers],
    client,
    clientId: 'ferry-bench',
    kafkaLogLevel: 'nothing',
  });
  const topic = uniqueName('relay');
  await ensureTopics(connection, [{ topic, partitions: 3 }]);
  const publisher = new KafkaPublisher(connection);
  // The same producer settings as KafkaPublisher's, without ferry around it.
  const raw = connection.kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  try {
    await publisher.connect();
    await raw.connect();
  } catch (error) {
    await Promise.allSettled([publisher.close(), raw.disconnect()]);
    await deleteTopics(connection, [topic]).catch(() => undefined);
    throw error;
  }
  return {
    destination: topic,
    publisher,
    prepare(batch) {
      const messages = batch.map((message) => ({
        key: message.orderingKey,
        value: Buffer.from(JSON.stringify(message.payload), 'utf8'),
        headers: outboxHeaders(message),
      }));
      return async () => {
        await raw.sendBatch({ acks: -1, topicMessages: [{ topic, messages }] });
      };
    },
    async close() {
      await Promise.allSettled([publisher.close(), raw.disconnect()]);
      await deleteTopics(connection, [topic]);
    },
  };
}
