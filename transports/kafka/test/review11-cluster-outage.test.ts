/**
 * Review of issue 11, "broker outages do not spend message retries": a cluster that is up but
 * cannot take writes (fewer in-sync replicas than min.insync.replicas, so every acks=all produce
 * fails NOT_ENOUGH_REPLICAS; likewise leader elections and broker-side request timeouts) is an
 * outage of the cluster, not a fault of the message. The publisher reported it `retryable`, so
 * the relay spent the events' attempts and marked them FAILED while it lasted.
 */
import { classifyKafkaError } from '../src/errors';
import { KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError, KafkaJSRequestTimeoutError } from 'kafkajs';

test.each([
  ['NOT_ENOUGH_REPLICAS', 19],
  ['LEADER_NOT_AVAILABLE', 5],
  ['REQUEST_TIMED_OUT', 7],
])('a produce that failed with %s after kafkajs retries is unavailable', (type, code) => {
  const protocol = new KafkaJSProtocolError({ message: type, type, code, retriable: true } as never);
  const error = new KafkaJSNumberOfRetriesExceeded(protocol, { retryCount: 5, retryTime: 100 });
  expect(classifyKafkaError(error).unavailable).toBe(true);
});

test('a request the broker never answered (KafkaJSRequestTimeoutError) is unavailable', () => {
  const error = new KafkaJSRequestTimeoutError('Request Produce(key: 0, version: 7) timed out', {} as never);
  expect(classifyKafkaError(error).unavailable).toBe(true);
});
