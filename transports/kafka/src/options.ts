import {
  FerryConfigError,
  defaultLogger,
  integerOption as integer,
  nonEmptyOption as nonEmpty,
  resolveBackoff,
  type BackoffPolicy,
  type Logger,
} from '@ferry/core';
import type { KafkaConnection } from './connection';
import type { IdentityExtractor } from './wire';

/** Every default in one table; the package README quotes it. */
export const DEFAULTS = {
  clientId: 'ferry',
  connectionTimeoutMs: 3_000,
  requestTimeoutMs: 30_000,
  kafkaLogLevel: 'error',
  publisher: {
    sendTimeoutMs: 30_000,
    maxMessageBytes: 1_048_576,
    producerRetries: 5,
  },
  consumer: {
    fromBeginning: true,
    maxAcceptBatch: 100,
    sessionTimeoutMs: 30_000,
    heartbeatIntervalMs: 3_000,
    rebalanceTimeoutMs: 60_000,
    partitionsConsumedConcurrently: 1,
    maxWaitTimeMs: 5_000,
    deadLetterRetries: 5,
    deadLetterSuffix: '.dlq',
    retryBackoff: { initialMs: 500, maxMs: 30_000, multiplier: 2, jitter: 'full' } satisfies BackoffPolicy,
    restartBackoff: {
      initialMs: 1_000,
      maxMs: 30_000,
      multiplier: 2,
      jitter: 'full',
    } satisfies BackoffPolicy,
  },
} as const;

export type KafkaLogLevel = 'nothing' | 'error' | 'warn' | 'info' | 'debug';

export interface ConnectionOptions {
  /** `host:port` of one or more brokers. Required. */
  brokers: readonly string[];
  clientId?: string;
  connectionTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** Level at which kafkajs's own log lines are passed on to `logger`. */
  kafkaLogLevel?: KafkaLogLevel;
  logger?: Logger;
  /** Passed to kafkajs unchanged (TLS / SASL), e.g. `{ ssl: true, sasl: {...} }`. */
  kafkaConfig?: Readonly<Record<string, unknown>>;
}

export interface ResolvedConnectionOptions {
  readonly brokers: readonly string[];
  readonly clientId: string;
  readonly connectionTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly kafkaLogLevel: KafkaLogLevel;
  readonly logger: Logger;
  readonly kafkaConfig: Readonly<Record<string, unknown>>;
}

const LOG_LEVELS: readonly KafkaLogLevel[] = ['nothing', 'error', 'warn', 'info', 'debug'];

export function resolveConnectionOptions(options: ConnectionOptions): ResolvedConnectionOptions {
  if (!Array.isArray(options.brokers) || options.brokers.length === 0) {
    throw new FerryConfigError('brokers', 'must be a non-empty array of host:port strings');
  }
  options.brokers.forEach((broker, index) => {
    if (typeof broker !== 'string' || !/^[^\s:]+:\d+$/.test(broker)) {
      throw new FerryConfigError(`brokers[${index}]`, 'must be a host:port string');
    }
  });
  const kafkaLogLevel = options.kafkaLogLevel ?? DEFAULTS.kafkaLogLevel;
  if (!LOG_LEVELS.includes(kafkaLogLevel)) {
    throw new FerryConfigError('kafkaLogLevel', `must be one of ${LOG_LEVELS.join(', ')}`);
  }
  return {
    brokers: [...options.brokers],
    clientId: nonEmpty('clientId', options.clientId ?? DEFAULTS.clientId),
    connectionTimeoutMs: integer(
      'connectionTimeoutMs',
      options.connectionTimeoutMs ?? DEFAULTS.connectionTimeoutMs,
      1,
    ),
    requestTimeoutMs: integer('requestTimeoutMs', options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs, 1),
    kafkaLogLevel,
    logger: options.logger ?? defaultLogger('ferry.kafka'),
    kafkaConfig: options.kafkaConfig ?? {},
  };
}

/** What the inbox consumer reports to `onEvent` (through safeEmit: a throwing observer changes nothing). */
export type KafkaConsumerEvent =
  | { readonly kind: 'joined'; readonly assignment: Readonly<Record<string, number[]>> }
  | {
      readonly kind: 'accepted';
      readonly topic: string;
      readonly partition: number;
      readonly accepted: number;
      readonly duplicates: number;
      readonly deadLettered: number;
    }
  | {
      readonly kind: 'committed';
      readonly topic: string;
      readonly partition: number;
      readonly offset: string;
      readonly records: number;
    }
  | {
      readonly kind: 'dead_lettered';
      readonly topic: string;
      readonly partition: number;
      readonly offset: string;
      readonly reason: string;
      readonly deadLetterTopic: string;
    }
  | {
      readonly kind: 'acceptance_failed';
      readonly topic: string;
      readonly partition: number;
      readonly offset: string;
      readonly attempt: number;
      readonly delayMs: number;
      readonly error: string;
    }
  | { readonly kind: 'crashed'; readonly error: string; readonly restart: boolean };

export interface ConsumerOptions {
  connection: KafkaConnection;
  /** One topic … */
  topic?: string;
  /** … or several. */
  topics?: readonly string[];
  groupId: string;
  /** The inbox consumer (handler) name every record is accepted for. */
  consumer: string;
  /** Dead-letter topic, or a function of the source topic. Default `<topic>.dlq`. Must exist. */
  deadLetterTopic?: string | ((sourceTopic: string) => string);
  /** Identity of records without ferry's `x-ferry-message-id` header; without one they are dead-lettered. */
  identity?: IdentityExtractor;
  /** Where a group without a committed offset starts. Default true: nothing published before the group existed is skipped. */
  fromBeginning?: boolean;
  /** Records per `acceptMany` call (and per commit). */
  maxAcceptBatch?: number;
  sessionTimeoutMs?: number;
  heartbeatIntervalMs?: number;
  rebalanceTimeoutMs?: number;
  partitionsConsumedConcurrently?: number;
  /** Longest a fetch waits on the broker for new records (also bounds how long close() waits for it). */
  maxWaitTimeMs?: number;
  /** kafkajs retries of a dead-letter send before the chunk counts as failed (and is retried after a backoff). */
  deadLetterRetries?: number;
  /** Backoff of a partition whose acceptance failed, by consecutive failure. */
  retryBackoff?: Partial<BackoffPolicy>;
  /** Backoff between restarts after a crash kafkajs does not restart itself. */
  restartBackoff?: Partial<BackoffPolicy>;
  onEvent?: (event: KafkaConsumerEvent) => unknown;
  /** Random source for jitter. */
  random?: () => number;
}

export interface ResolvedConsumerOptions {
  readonly connection: KafkaConnection;
  readonly topics: readonly string[];
  readonly groupId: string;
  readonly consumer: string;
  readonly deadLetterTopic: (sourceTopic: string) => string;
  readonly identity: IdentityExtractor | null;
  readonly fromBeginning: boolean;
  readonly maxAcceptBatch: number;
  readonly sessionTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  readonly rebalanceTimeoutMs: number;
  readonly partitionsConsumedConcurrently: number;
  readonly maxWaitTimeMs: number;
  readonly deadLetterRetries: number;
  readonly retryBackoff: BackoffPolicy;
  readonly restartBackoff: BackoffPolicy;
  readonly onEvent: ((event: KafkaConsumerEvent) => unknown) | undefined;
  readonly random: () => number;
}

export function resolveConsumerOptions(options: ConsumerOptions): ResolvedConsumerOptions {
  const defaults = DEFAULTS.consumer;
  if (options.connection === undefined || options.connection === null) {
    throw new FerryConfigError('connection', 'a KafkaConnection is required');
  }
  const topics = [...(options.topics ?? []), ...(options.topic === undefined ? [] : [options.topic])];
  if (topics.length === 0) throw new FerryConfigError('topics', 'give `topic` or a non-empty `topics`');
  topics.forEach((topic, index) => nonEmpty(`topics[${index}]`, topic));
  const deadLetter = options.deadLetterTopic;
  const deadLetterTopic =
    typeof deadLetter === 'function'
      ? deadLetter
      : deadLetter === undefined
        ? (topic: string) => `${topic}${defaults.deadLetterSuffix}`
        : (
            (name: string) => () =>
              name
          )(nonEmpty('deadLetterTopic', deadLetter));
  const sessionTimeoutMs = integer(
    'sessionTimeoutMs',
    options.sessionTimeoutMs ?? defaults.sessionTimeoutMs,
    1_000,
  );
  return {
    connection: options.connection,
    topics,
    groupId: nonEmpty('groupId', options.groupId),
    consumer: nonEmpty('consumer', options.consumer),
    deadLetterTopic,
    identity: options.identity ?? null,
    fromBeginning: options.fromBeginning ?? defaults.fromBeginning,
    maxAcceptBatch: integer('maxAcceptBatch', options.maxAcceptBatch ?? defaults.maxAcceptBatch, 1, 10_000),
    sessionTimeoutMs,
    heartbeatIntervalMs: integer(
      'heartbeatIntervalMs',
      options.heartbeatIntervalMs ?? Math.min(defaults.heartbeatIntervalMs, Math.floor(sessionTimeoutMs / 3)),
      1,
      sessionTimeoutMs - 1,
    ),
    rebalanceTimeoutMs: integer(
      'rebalanceTimeoutMs',
      options.rebalanceTimeoutMs ?? defaults.rebalanceTimeoutMs,
      1,
    ),
    partitionsConsumedConcurrently: integer(
      'partitionsConsumedConcurrently',
      options.partitionsConsumedConcurrently ?? defaults.partitionsConsumedConcurrently,
      1,
    ),
    maxWaitTimeMs: integer('maxWaitTimeMs', options.maxWaitTimeMs ?? defaults.maxWaitTimeMs, 0),
    deadLetterRetries: integer(
      'deadLetterRetries',
      options.deadLetterRetries ?? defaults.deadLetterRetries,
      1,
      100,
    ),
    retryBackoff: resolveBackoff('retryBackoff', options.retryBackoff, defaults.retryBackoff),
    restartBackoff: resolveBackoff('restartBackoff', options.restartBackoff, defaults.restartBackoff),
    onEvent: options.onEvent,
    random: options.random ?? Math.random,
  };
}
