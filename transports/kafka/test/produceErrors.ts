import { MultipleErrors, ResponseError } from '@platformatic/kafka';
import { KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError } from 'kafkajs';

/**
 * The errors each client throws for a produce the broker answered with a partition error: the
 * shapes a classification test builds from the clients' own classes (no broker).
 */

/** kafkajs: the protocol error, inside the KafkaJSNumberOfRetriesExceeded of its retrier. */
export function kafkajsProduceError(
  type: string,
  code: number,
  retriable: boolean,
  message = `${type} refused`,
): Error {
  const protocol = new KafkaJSProtocolError({ message, type, code, retriable } as never);
  return new KafkaJSNumberOfRetriesExceeded(protocol, { retryCount: retriable ? 5 : 0, retryTime: 100 });
}

/** @platformatic/kafka: a ResponseError of the partition's error code in a MultipleErrors (review 140's probe). */
export function platformaticProduceError(code: number): Error {
  const answer = new ResponseError(0, 11, { '/responses/0/partition_responses/0': [code, null] }, {});
  return new MultipleErrors('Producing messages failed.', [answer]);
}
