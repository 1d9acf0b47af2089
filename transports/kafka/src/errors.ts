import { FerryError } from '@ferry/core';
import { UNDECODABLE_BATCH, UndecodableBatchError } from './codecs/decoders';
import { UNSUPPORTED_COMPRESSION } from './client/platformaticCodecs';
import {
  describeTransportError,
  isConnectionLevelError,
  stripUrlCredentials,
  TRANSPORT_REJECT_REASONS,
  transportError as sharedTransportError,
} from '@ferry/core/transport';

/**
 * Broker failures are translated here, at the boundary: callers see a FerryError
 * (`FERRY_TRANSPORT_ERROR`, `FERRY_CLOSED`, `FERRY_PUBLISH_FAILED`, `FERRY_PERMANENT_FAILURE`),
 * never a raw kafkajs error.
 */
export function transportError(message: string, cause?: unknown): FerryError {
  return sharedTransportError(message, cause, describeError);
}

export { closedError } from '@ferry/core/transport';

/**
 * Why a record was dead-lettered (or skipped); travels in the `x-ferry-reject-reason` header.
 * `tombstone`: a record with a null value (a deletion marker of a compacted topic).
 */
export const REJECT_REASONS = { ...TRANSPORT_REJECT_REASONS, tombstone: 'tombstone' } as const;

export type RejectReason = (typeof REJECT_REASONS)[keyof typeof REJECT_REASONS];

/**
 * Kafka protocol error names that retrying the same message cannot fix, as kafkajs reports them
 * in `type` and @platformatic/kafka in `apiId`. Every other failure counts as retryable
 * (connection loss, timeouts, leader elections and NOT_ENOUGH_REPLICAS as unavailable, see below,
 * as are the refusals of the relay's own clock, credentials or producer state: RELAY_REFUSALS).
 * A refusal of the principal's rights is not the message's fault but a grant an operator makes
 * (review 141): a topic's (TOPIC_AUTHORIZATION_FAILED) is retryable, as RabbitMQ's 403 on one
 * destination; the cluster's (CLUSTER_AUTHORIZATION_FAILED) is unavailable, as SQS's refused
 * credentials.
 */
export const PERMANENT_KAFKA_ERRORS: ReadonlySet<string> = new Set([
  'MESSAGE_TOO_LARGE',
  'RECORD_LIST_TOO_LARGE',
  'INVALID_TOPIC_EXCEPTION',
  'INVALID_RECORD',
  'INVALID_REQUIRED_ACKS',
  'UNSUPPORTED_FOR_MESSAGE_FORMAT',
  'UNSUPPORTED_COMPRESSION_TYPE',
  'POLICY_VIOLATION',
]);

/** What to fix for a refusal of the relay's (or a consumer's) own setup, named in its reason. */
const RELAY_HINTS = {
  credentials: 'the credentials were refused',
  mechanism: "the broker's listener does not enable the SASL mechanism configured",
  saslState: "the broker's listener refused the SASL handshake (a listener without SASL?)",
  version: 'the broker does not support a request the client needs',
} as const;

/**
 * Kafka protocol errors a consumer's start can meet that only an operator can fix: no retry of
 * the same start succeeds. ready() rejects with FERRY_PERMANENT_FAILURE at once (the consumer
 * still retries, so it starts once the operator fixed it), as RabbitMQ's ready() does for an
 * access or precondition refusal. Each maps to a hint naming what to change, where one option
 * decides it.
 */
const OPERATOR_REFUSALS: ReadonlyMap<string, string> = new Map([
  [
    'INVALID_SESSION_TIMEOUT',
    "sessionTimeoutMs is outside the broker's group.min.session.timeout.ms..group.max.session.timeout.ms",
  ],
  ['TOPIC_AUTHORIZATION_FAILED', 'the principal may not read a consumed topic'],
  ['GROUP_AUTHORIZATION_FAILED', 'the principal may not use groupId'],
  ['CLUSTER_AUTHORIZATION_FAILED', 'the principal lacks a cluster permission'],
  ['SASL_AUTHENTICATION_FAILED', RELAY_HINTS.credentials],
  ['UNSUPPORTED_SASL_MECHANISM', RELAY_HINTS.mechanism],
  ['ILLEGAL_SASL_STATE', RELAY_HINTS.saslState],
  ['INVALID_GROUP_ID', 'groupId is refused by the broker'],
  ['UNSUPPORTED_VERSION', RELAY_HINTS.version],
]);

/**
 * The hint of the operator-only refusal (OPERATOR_REFUSALS) among the causes of `error`, naming
 * the refusal (e.g. `INVALID_SESSION_TIMEOUT: sessionTimeoutMs is outside …`), or null when the
 * failure is one a retry may fix.
 */
export function operatorRefusal(error: unknown): string | null {
  for (const current of nestedTree(error)) {
    const type = protocolType(current);
    const hint = type === null ? undefined : OPERATOR_REFUSALS.get(type);
    if (hint !== undefined) return `${type}: ${hint}`;
  }
  return null;
}

/**
 * Refusals that depend on the relay, not on the event: its clock, its credentials, its idempotent
 * producer's state, the client's protocol versions, its rate against the cluster's quotas. Each
 * refuses every event alike until the relay or an operator changes something, so each is
 * `unavailable` (no attempt spent, the relay's circuit open) rather than `retryable`, which
 * turned every event FAILED after its attempts (review 143); the hint says what to fix and is
 * added to the reason. The producer-state ones clear by themselves: a failed send retires its
 * producer (SequencedProducer), and the new one asks the cluster for a new producer id and epoch
 * (InitProducerId, through the coordinator, whence the COORDINATOR_* ones).
 * The split stays honest: ferry sets no record timestamp (the client stamps the relay's clock),
 * so INVALID_TIMESTAMP is never one record's; a refusal that can be about one record
 * (INVALID_RECORD, MESSAGE_TOO_LARGE, CORRUPT_MESSAGE, a topic's TOPIC_AUTHORIZATION_FAILED or
 * UNKNOWN_TOPIC_OR_PARTITION) is not here, as `unavailable` would stall its key for ever.
 */
const RELAY_REFUSALS: ReadonlyMap<string, string> = new Map([
  [
    'INVALID_TIMESTAMP',
    "the relay's clock stamps each record (ferry sets no timestamp) and is outside the topic's " +
      "message.timestamp.before.max.ms / message.timestamp.after.max.ms: correct the relay's clock " +
      "(NTP) or widen the topic's bounds",
  ],
  ['SASL_AUTHENTICATION_FAILED', RELAY_HINTS.credentials],
  ['UNSUPPORTED_SASL_MECHANISM', RELAY_HINTS.mechanism],
  ['ILLEGAL_SASL_STATE', RELAY_HINTS.saslState],
  ['UNSUPPORTED_VERSION', RELAY_HINTS.version],
  [
    'TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
    'the principal may not use a producer id (IdempotentWrite / transactional id)',
  ],
  [
    'THROTTLING_QUOTA_EXCEEDED',
    "the principal's rate of topic creations or deletions is over the cluster's controller mutation quota",
  ],
  ['UNKNOWN_PRODUCER_ID', "the broker no longer knows the producer's id: a new producer takes over"],
  ['OUT_OF_ORDER_SEQUENCE_NUMBER', "the producer's sequence state was lost: a new producer takes over"],
  ['INVALID_PRODUCER_EPOCH', "the producer's epoch is stale: a new producer takes over"],
  ['PRODUCER_FENCED', 'the producer was fenced: a new producer takes over'],
  ['INVALID_PRODUCER_ID_MAPPING', "the producer's id is not known to the cluster: a new producer takes over"],
  ['COORDINATOR_NOT_AVAILABLE', "the coordinator of the producer's id is not available"],
  ['NOT_COORDINATOR', "the coordinator of the producer's id moved"],
  ['COORDINATOR_LOAD_IN_PROGRESS', "the coordinator of the producer's id is loading"],
]);

/** The hint of the first relay refusal (RELAY_REFUSALS) among the causes of `error`, or null. */
function relayRefusal(error: unknown): string | null {
  for (const current of nestedTree(error)) {
    const type = protocolType(current);
    const hint = type === null ? undefined : RELAY_REFUSALS.get(type);
    if (hint !== undefined) return `${type}: ${hint}`;
  }
  return null;
}

/**
 * kafkajs errors (by `name`) and protocol types that mean the cluster could not be reached or
 * cannot take writes: no answer to a request, too few in-sync replicas, no leader (an election),
 * a broker-side timeout waiting for replicas, a leader whose disk failed. None is about the message, so none spends an
 * attempt (the relay's circuit opens instead).
 */
const UNAVAILABLE_NAMES: ReadonlySet<string> = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSBrokerNotFound',
  'KafkaJSRequestTimeoutError',
]);
const UNAVAILABLE_TYPES: ReadonlySet<string> = new Set([
  'BROKER_NOT_AVAILABLE',
  'NETWORK_EXCEPTION',
  'REQUEST_TIMED_OUT',
  'NOT_ENOUGH_REPLICAS',
  'NOT_ENOUGH_REPLICAS_AFTER_APPEND',
  'LEADER_NOT_AVAILABLE',
  'NOT_LEADER_FOR_PARTITION',
  'NOT_LEADER_OR_FOLLOWER',
  // The partition's log directory failed on its leader (a disk error): offline until the broker
  // is restarted or the controller moves its leadership, whatever is sent (review 140).
  'KAFKA_STORAGE_ERROR',
  // The principal lacks a cluster permission: every event is refused until it is granted (review 141).
  'CLUSTER_AUTHORIZATION_FAILED',
  // Refusals of the relay's clock, credentials, producer state or client version (review 143).
  ...RELAY_REFUSALS.keys(),
]);
/**
 * @platformatic/kafka's connection-level `code`s: NetworkError (refused, closed, "Cannot connect
 * to any broker" underneath) and TimeoutError (connect and request timeouts; 1.x gives it the
 * NetworkError code, PLT_KFK_TIMEOUT is listed for a release that gives it its own).
 */
const UNAVAILABLE_CODES: ReadonlySet<string> = new Set(['PLT_KFK_NETWORK', 'PLT_KFK_TIMEOUT']);

/** Marks an error (e.g. the producer's disconnect) as connection-level for classifyKafkaError. */
export function unavailableError(message: string): Error {
  return markUnavailable(new Error(message));
}

/** `error`, marked connection-level for classifyKafkaError (the publisher's `unavailable`). */
export function markUnavailable<E extends Error>(error: E): E {
  return Object.assign(error, { kafkaUnavailable: true });
}

function isKafkaConnectionLevel(error: object): boolean {
  const { name, code, kafkaUnavailable } = error as {
    name?: unknown;
    code?: unknown;
    kafkaUnavailable?: unknown;
  };
  const type = protocolType(error);
  return (
    kafkaUnavailable === true ||
    (typeof name === 'string' && UNAVAILABLE_NAMES.has(name)) ||
    (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) ||
    (type !== null && UNAVAILABLE_TYPES.has(type))
  );
}

export interface ErrorClassification {
  /** Connection-level (broker unreachable, connection lost): the publisher's `unavailable` outcome. */
  readonly unavailable: boolean;
  readonly retriable: boolean;
  readonly message: string;
  /** The Kafka protocol error type found in the cause chain, if any. */
  readonly kafkaType: string | null;
}

/** The protocol error name an error carries: kafkajs's `type`, @platformatic/kafka's `apiId`. */
function protocolType(error: unknown): string | null {
  const { type, apiId, name, code } = error as {
    type?: unknown;
    apiId?: unknown;
    name?: unknown;
    code?: unknown;
  };
  if (typeof type === 'string') return type;
  if (typeof apiId === 'string') return apiId;
  // A refused authentication neither client names by its protocol type: kafkajs's
  // KafkaJSSASLAuthenticationError (the SASL_AUTHENTICATION_FAILED answer it came from is not
  // kept) and @platformatic/kafka's AuthenticationError (also for a SCRAM exchange it refuses).
  if (name === 'KafkaJSSASLAuthenticationError' || code === 'PLT_KFK_AUTHENTICATION')
    return 'SASL_AUTHENTICATION_FAILED';
  return null;
}

/** Nested errors: `cause` (both clients) and `errors` (@platformatic/kafka's MultipleErrors). */
function nestedErrors(error: unknown): unknown[] {
  const { cause, errors } = error as { cause?: unknown; errors?: unknown };
  const nested = Array.isArray(errors) ? [...(errors as unknown[])] : [];
  if (cause !== undefined && cause !== null) nested.unshift(cause);
  return nested;
}

/** The error and those nested in it, breadth first (bounded: hostile or cyclic chains end). */
function* nestedTree(error: unknown): Generator<object> {
  const queue: unknown[] = [error];
  for (let seen = 0; queue.length > 0 && seen < 50; seen += 1) {
    const current = queue.shift();
    if (current === undefined || current === null || typeof current !== 'object') continue;
    yield current;
    queue.push(...nestedErrors(current));
  }
}

/**
 * The record batch a client could not decompress, if one is among the causes of `error`:
 * ferry's UndecodableBatchError (both clients decode through ferry's codecs) or
 * @platformatic/kafka's own UnsupportedCompressionError. Null otherwise. kafkajs's retrier
 * rethrows a non-retriable error as a KafkaJSNonRetriableError that keeps its message but, as
 * its cause, the error's own cause: the message tells then.
 */
export function undecodableBatch(error: unknown): Error | null {
  for (const current of nestedTree(error)) {
    if (current instanceof UndecodableBatchError) return current;
    if (current instanceof Error && current.message.startsWith(`${UNDECODABLE_BATCH} (`)) return current;
    if ((current as { code?: unknown }).code === UNSUPPORTED_COMPRESSION) return current as Error;
  }
  return null;
}

/** Whether a protocol error of one of `types` (kafkajs `type`, @platformatic/kafka `apiId`) is in the error's tree. */
export function hasKafkaType(error: unknown, types: ReadonlySet<string>): boolean {
  for (const current of nestedTree(error)) {
    const type = protocolType(current);
    if (type !== null && types.has(type)) return true;
  }
  return false;
}

/**
 * The one place a failure of either client is classified: walks the causes (kafkajs wraps the
 * protocol error in KafkaJSNumberOfRetriesExceeded, @platformatic/kafka nests it in
 * MultipleErrors) for a FerryError's verdict or a permanent protocol error, and for a
 * connection-level failure anywhere in the tree (core's isConnectionLevelError on each error,
 * so a socket code under a MultipleErrors counts too).
 */
export function classifyKafkaError(error: unknown): ErrorClassification {
  let unavailable = false;
  for (const current of nestedTree(error)) {
    if (isConnectionLevelError(current, isKafkaConnectionLevel)) {
      unavailable = true;
      break;
    }
  }
  let kafkaType: string | null = null;
  let permanent = false;
  for (const current of nestedTree(error)) {
    const type = protocolType(current);
    if (type !== null) {
      if (kafkaType === null || kafkaType === STAND_IN_TYPE) kafkaType = type;
      if (PERMANENT_KAFKA_ERRORS.has(type)) permanent = true;
    }
    if (current instanceof FerryError) {
      return { unavailable, retriable: current.retriable, message: describeError(error), kafkaType };
    }
  }
  const hint = unavailable ? relayRefusal(error) : null;
  const message = hint === null ? describeError(error) : `${describeError(error)}; ${hint}`;
  return { unavailable, retriable: !permanent || unavailable, message, kafkaType };
}

/**
 * The protocol error @platformatic/kafka makes of each record error of a produce answer (the
 * broker gives those no code, the client code -1): named before the partition's own error
 * (INVALID_RECORD), so a description names that one instead (review 140).
 */
const STAND_IN_TYPE = 'UNKNOWN_SERVER_ERROR';

/**
 * What actually failed under a MultipleErrors: its first error, followed down through nested
 * MultipleErrors, then that error's cause chain ("Connection to … failed. <- SASL mechanism
 * plain not supported."), at most 10 levels in all. Null when `error` holds no nested errors.
 */
function innermost(error: Error): string | null {
  let current: unknown = error;
  let depth = 0;
  for (; depth < 10; depth += 1) {
    const { errors } = current as { errors?: unknown };
    if (!Array.isArray(errors) || errors.length === 0) break;
    current = errors.find((nested) => protocolType(nested) !== STAND_IN_TYPE) ?? errors[0];
  }
  if (current === error) return null;
  const parts = [describeError(current)];
  for (let cause = causeOf(current); cause !== undefined && depth < 10; depth += 1) {
    const text = describeError(cause);
    if (!parts.some((part) => part.includes(text))) parts.push(text);
    cause = causeOf(cause);
  }
  return parts.join(' <- ');
}

function causeOf(error: unknown): unknown {
  return error !== null && typeof error === 'object' ? (error as { cause?: unknown }).cause : undefined;
}

export function describeError(error: unknown): string {
  try {
    if (error instanceof Error) {
      const type = protocolType(error);
      const detail = innermost(error) ?? type;
      let message =
        detail !== null && !error.message.includes(detail) ? `${error.message} (${detail})` : error.message;
      // @platformatic/kafka keeps the broker's own text of a protocol error apart (kafkajs's
      // answers to produce carry none): why a record was refused, e.g. "Compacted topic cannot
      // accept message without key".
      const { serverErrorMessage } = error as { serverErrorMessage?: unknown };
      if (
        typeof serverErrorMessage === 'string' &&
        serverErrorMessage !== '' &&
        !message.includes(serverErrorMessage)
      )
        message = `${message}: ${serverErrorMessage}`;
      return stripUrlCredentials(message);
    }
  } catch {
    // An error whose properties throw when read: described as any other thrown value.
  }
  return describeTransportError(error);
}

/**
 * `CODE: message <- cause <- …` down the cause chain (at most 5 levels), for log lines and events
 * that must name why something failed, not only that it did. A cause already quoted in the
 * message above it is not repeated.
 */
export function describeCauses(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth += 1) {
    const text = describeError(current);
    if (!parts.some((part) => part.includes(text))) {
      parts.push(current instanceof FerryError ? `${current.code}: ${text}` : text);
    }
    current = (current as { cause?: unknown }).cause;
  }
  return parts.length === 0 ? describeError(error) : parts.join(' <- ');
}
