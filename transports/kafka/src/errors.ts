import { FerryError, TRANSPORT_REJECT_REASONS, transportError as sharedTransportError } from '@ferry/core';

/**
 * Broker failures are translated here, at the boundary: callers see a FerryError
 * (`FERRY_TRANSPORT_ERROR`, `FERRY_CLOSED`, `FERRY_PUBLISH_FAILED`, `FERRY_PERMANENT_FAILURE`),
 * never a raw kafkajs error.
 */
export function transportError(message: string, cause?: unknown): FerryError {
  return sharedTransportError(message, cause, describeError);
}

export { closedError } from '@ferry/core';

/** Why a message was dead-lettered; travels in the `x-ferry-reject-reason` header. */
export const REJECT_REASONS = TRANSPORT_REJECT_REASONS;

export type RejectReason = (typeof REJECT_REASONS)[keyof typeof REJECT_REASONS];

/**
 * Kafka error types (protocol error names as kafkajs reports them in `type`) that retrying the
 * same message cannot fix. Every other failure — connection loss, timeouts, leader elections,
 * NOT_ENOUGH_REPLICAS, retries exhausted on a retriable cause — counts as retryable.
 */
export const PERMANENT_KAFKA_ERRORS: ReadonlySet<string> = new Set([
  'MESSAGE_TOO_LARGE',
  'RECORD_LIST_TOO_LARGE',
  'INVALID_TOPIC_EXCEPTION',
  'INVALID_RECORD',
  'INVALID_REQUIRED_ACKS',
  'TOPIC_AUTHORIZATION_FAILED',
  'CLUSTER_AUTHORIZATION_FAILED',
  'UNSUPPORTED_FOR_MESSAGE_FORMAT',
  'UNSUPPORTED_COMPRESSION_TYPE',
  'POLICY_VIOLATION',
]);

export interface ErrorClassification {
  readonly retriable: boolean;
  readonly message: string;
  /** The Kafka protocol error type found in the cause chain, if any. */
  readonly kafkaType: string | null;
}

/** Walks the cause chain (kafkajs wraps the protocol error in KafkaJSNumberOfRetriesExceeded). */
export function classifyKafkaError(error: unknown): ErrorClassification {
  let kafkaType: string | null = null;
  let current: unknown = error;
  for (let depth = 0; depth < 10 && current !== undefined && current !== null; depth += 1) {
    const type = (current as { type?: unknown }).type;
    if (typeof type === 'string' && kafkaType === null) kafkaType = type;
    if (current instanceof FerryError) {
      return { retriable: current.retriable, message: describeError(error), kafkaType };
    }
    current = (current as { cause?: unknown }).cause;
  }
  const retriable = kafkaType === null || !PERMANENT_KAFKA_ERRORS.has(kafkaType);
  return { retriable, message: describeError(error), kafkaType };
}

export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const type = (error as { type?: unknown }).type;
    return typeof type === 'string' && !error.message.includes(type)
      ? `${error.message} (${type})`
      : error.message;
  }
  if (error === undefined) return 'unknown error';
  return String(error);
}
