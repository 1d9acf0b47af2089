/**
 * Review 140 (review 11's class: a cluster that is up but cannot take writes is an outage, not a
 * fault of the message): a produce answered KAFKA_STORAGE_ERROR (the partition's log directory
 * failed on its leader: a disk error, the partition offline until the broker is restarted or the
 * controller moves its leadership) was `retryable`, so the relay spent the events' attempts
 * and marked them FAILED while the broker's disk was out, on both clients.
 */
import { classifyKafkaError } from '../src/errors';
import { kafkajsProduceError, platformaticProduceError } from './produceErrors';

test('kafkajs: a produce that failed KAFKA_STORAGE_ERROR after its retries is unavailable', () => {
  const error = kafkajsProduceError(
    'KAFKA_STORAGE_ERROR',
    56,
    true,
    'Disk error when trying to access log file on the disk',
  );
  expect(classifyKafkaError(error)).toMatchObject({ unavailable: true, kafkaType: 'KAFKA_STORAGE_ERROR' });
});

test('@platformatic/kafka: a produce answered KAFKA_STORAGE_ERROR is unavailable', () => {
  // The shape the client throws for a produce answer with a partition error (probed on Kafka 4).
  expect(classifyKafkaError(platformaticProduceError(56))).toMatchObject({
    unavailable: true,
    kafkaType: 'KAFKA_STORAGE_ERROR',
  });
});
