import { outboxHeaders } from '@ferry/core';
import { KafkaConnection, KafkaPublisher, deleteTopics, ensureTopics } from '@ferry/kafka';
import { SERVICES, uniqueName } from '../env';
import { relayScenario } from './relay';

/** Outbox → Kafka: KafkaPublisher vs a raw kafkajs idempotent producer (acks -1), same batches. */
export const relayKafka = relayScenario({
  name: 'relay-kafka',
  baselineLabel: 'kafkajs idempotent producer, sendBatch acks -1',
  subjectLabel: 'createRelay + KafkaPublisher',
  async openBroker() {
    const connection = new KafkaConnection({
      brokers: [...SERVICES.kafkaBrokers],
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
          headers: outboxHeaders(message, 'remove'),
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
  },
});
