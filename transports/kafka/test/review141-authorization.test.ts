/**
 * Review 141 (from review 140's note): a produce the cluster refuses for the principal's rights
 * was `permanent`, so one missing ACL FAILed every event of a topic (TOPIC_AUTHORIZATION_FAILED)
 * or of every topic (CLUSTER_AUTHORIZATION_FAILED) at its first attempt, for a configuration error
 * no retry of the event fixes and an operator does; the other transports do not (RabbitMQ's 403 on
 * one destination is `retryable`, its attempts spent with backoff until FAILED at maxRetries;
 * SQS's refused credentials are `unavailable`). Now, as they do: a topic's refusal is the
 * destination's fault, `retryable`; the cluster's refuses every event, `unavailable` (no attempt
 * spent, the relay's circuit open until the grant), on both clients.
 */
import { classifyKafkaError } from '../src/errors';
import { kafkajsProduceError, platformaticProduceError } from './produceErrors';

const kafkajs = (type: string, code: number) => kafkajsProduceError(type, code, false);
const platformatic = platformaticProduceError;

const TOPIC = { type: 'TOPIC_AUTHORIZATION_FAILED', code: 29 };
const CLUSTER = { type: 'CLUSTER_AUTHORIZATION_FAILED', code: 31 };

test.each([
  ['kafkajs', kafkajs(TOPIC.type, TOPIC.code)],
  ['@platformatic/kafka', platformatic(TOPIC.code)],
])('%s: a topic the principal may not write is retryable, the destination charged', (_, error) => {
  expect(classifyKafkaError(error)).toMatchObject({
    unavailable: false,
    retriable: true,
    kafkaType: TOPIC.type,
  });
});

test.each([
  ['kafkajs', kafkajs(CLUSTER.type, CLUSTER.code)],
  ['@platformatic/kafka', platformatic(CLUSTER.code)],
])('%s: a cluster permission the principal lacks is unavailable, no event charged', (_, error) => {
  expect(classifyKafkaError(error)).toMatchObject({ unavailable: true, kafkaType: CLUSTER.type });
});
