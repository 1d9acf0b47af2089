import { FerryConfigError, type Logger } from '@ferry/core';
import {
  describeTransportError,
  discardAnswer,
  guardLogger,
  integerOption as integer,
  timerOption,
  nonEmptyOption as nonEmpty,
  booleanOption,
  checkTenantSource,
  functionOption,
  knownKeysOption,
  oneOfOption,
  received,
  belowOption,
  resolveBackoff,
  type OptionKeys,
  type BackoffPolicy,
  type TenantSource,
  type TransportConsumerEvent,
  type TransportObserver,
  loggerOption,
} from '@ferry/core/transport';
import type { KafkaConnection } from './connection';
import { CONNECTION_DEFAULTS, MIN_MAX_WAIT_TIME_MS } from './connectionOptions';
import type { IdentityExtractor, InboundRecord } from './wire';

/** Every default in one table; the package README quotes it. */
export const DEFAULTS = {
  ...CONNECTION_DEFAULTS,
  publisher: {
    confirmTimeoutMs: 30_000,
    closeTimeoutMs: 10_000,
    maxMessageBytes: 1_048_576,
    producerRetries: 5,
  },
  consumer: {
    fromBeginning: true,
    tombstones: 'dead-letter',
    maxBatchSize: 100,
    sessionTimeoutMs: 30_000,
    heartbeatIntervalMs: 3_000,
    rebalanceTimeoutMs: 60_000,
    partitionsConsumedConcurrently: 1,
    maxWaitTimeMs: 5_000,
    metadataMaxAgeMs: 30_000,
    closeTimeoutMs: 10_000,
    deadLetter: { topicSuffix: '.dlq', sendRetries: 5 },
    retryBackoff: { initialMs: 500, maxMs: 30_000, multiplier: 2, jitter: 'full' } satisfies BackoffPolicy,
    reconnectBackoff: {
      initialMs: 1_000,
      maxMs: 30_000,
      multiplier: 2,
      jitter: 'full',
    } satisfies BackoffPolicy,
  },
} as const;

/** Where a consumer's rejected records go (the `deadLetter` option). */
export interface KafkaDeadLetterOptions {
  readonly topic?: string | ((sourceTopic: string) => string);
  readonly sendRetries?: number;
}

/** What happens to a record with a null value (a tombstone of a compacted topic). */
export type TombstonePolicy = 'dead-letter' | 'skip';
const TOMBSTONE_POLICIES: readonly TombstonePolicy[] = ['dead-letter', 'skip'];

export interface ConsumerOptions {
  connection: KafkaConnection;
  /** One topic … */
  topic?: string;
  /** … or several. */
  topics?: readonly string[];
  groupId: string;
  /** The inbox consumer (handler) name every record is accepted for. */
  consumer: string;
  /**
   * Where rejected records go: `topic`, a name or a function of the source topic (default
   * `<topic>.dlq`; it must exist), and `sendRetries`, the client's retries of a dead-letter send
   * before the chunk counts as failed and is retried after a backoff (default 5).
   */
  deadLetter?: KafkaDeadLetterOptions;
  /** Identity of records without ferry's `x-ferry-message-id` header; without one they are dead-lettered. */
  identity?: IdentityExtractor;
  /**
   * Where a record's tenant comes from: `'header'` (default, `x-ferry-tenant-id`, which any
   * producer can set), `{ fixed: 'acme' }` (every record; a disagreeing header is dead-lettered
   * as `tenant_mismatch`), or a function of the record (null = global; a throw is dead-lettered
   * as `tenant_unresolved`).
   */
  tenant?: TenantSource<InboundRecord>;
  /** A tombstone (null value) is dead-lettered with reason `tombstone`, or committed without one (`skip`). */
  tombstones?: TombstonePolicy;
  /** Where a group without a committed offset starts. Default true: nothing published before the group existed is skipped. */
  fromBeginning?: boolean;
  /** Records per `acceptMany` call (and per commit). */
  maxBatchSize?: number;
  sessionTimeoutMs?: number;
  heartbeatIntervalMs?: number;
  rebalanceTimeoutMs?: number;
  partitionsConsumedConcurrently?: number;
  /**
   * Longest a fetch waits on the broker for new records (also bounds how long close() waits for
   * it). On kafkajs at most half of closeTimeoutMs (not below 100): a member with no partition
   * sleeps this long between fetches, on a timer close() must wait out (longPollWithin).
   */
  maxWaitTimeMs?: number;
  /**
   * How often the consumer reads the consumed topics' partitions again: a partition added to one
   * is assigned and read within about this long (the group rejoins). Default 30,000.
   */
  metadataMaxAgeMs?: number;
  /**
   * The longest close() waits for the client to finish (the batch in flight and its commit, the
   * fetch in flight, leaving the group) before it destroys what is left of it (its sockets):
   * a cluster gone silent answers none of it, and a process given 30 s to stop must. Work not
   * committed then is read again by the next owner (accepted once: a duplicate). Default 10,000.
   * On kafkajs a quarter of it also bounds the client's waits between its retries (the
   * connection's kafkaConfig.retry): close() waits out the retry pending, none runs after close()
   * resolved.
   */
  closeTimeoutMs?: number;
  /** Backoff of a partition whose acceptance failed, by consecutive failure. */
  retryBackoff?: Partial<BackoffPolicy>;
  /** Backoff between attempts to start (and restart after a crash the client does not restart itself from). */
  reconnectBackoff?: Partial<BackoffPolicy>;
  /** Default: the connection's logger. */
  logger?: Logger;
  /**
   * Told what the consumer does (through safeEmit, `transport: 'kafka'`, `source`: the record's
   * topic): received, accepted and settled (commits), lag (per partition after each commit, and
   * every 5 s on @platformatic/kafka),
   * dead-lettered, acceptance-failed (the partition seeks back), connected (with the
   * assignment), disconnected (a crash, with the wait before the restart).
   */
  observer?: TransportObserver<TransportConsumerEvent>;
  /** Random source for jitter. */
  random?: () => number;
}

export interface ResolvedConsumerOptions {
  readonly connection: KafkaConnection;
  readonly topics: readonly string[];
  readonly groupId: string;
  readonly consumer: string;
  readonly deadLetterTopic: (sourceTopic: string) => string;
  readonly deadLetterSendRetries: number;
  readonly identity: IdentityExtractor | null;
  readonly tenant: TenantSource<InboundRecord>;
  readonly tombstones: TombstonePolicy;
  readonly fromBeginning: boolean;
  readonly maxBatchSize: number;
  readonly sessionTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  readonly rebalanceTimeoutMs: number;
  readonly partitionsConsumedConcurrently: number;
  readonly maxWaitTimeMs: number;
  readonly metadataMaxAgeMs: number;
  readonly closeTimeoutMs: number;
  readonly retryBackoff: BackoffPolicy;
  readonly reconnectBackoff: BackoffPolicy;
  readonly logger: Logger;
  readonly observer: TransportObserver<TransportConsumerEvent> | undefined;
  readonly random: () => number;
}

const CONSUMER_KEYS = {
  connection: true,
  topic: true,
  topics: true,
  groupId: true,
  consumer: true,
  deadLetter: true,
  identity: true,
  fromBeginning: true,
  maxBatchSize: true,
  sessionTimeoutMs: true,
  heartbeatIntervalMs: true,
  rebalanceTimeoutMs: true,
  partitionsConsumedConcurrently: true,
  maxWaitTimeMs: true,
  metadataMaxAgeMs: true,
  closeTimeoutMs: true,
  retryBackoff: true,
  reconnectBackoff: true,
  logger: true,
  observer: true,
  random: true,
  tenant: true,
  tombstones: true,
} as const satisfies OptionKeys<ConsumerOptions>;

/**
 * A consumer's, publisher's or topology helper's `connection`: a KafkaConnection, else
 * FerryConfigError naming `connection` with the value received (left out, it was a TypeError).
 * By shape, not instanceof: a second copy of the package makes connections of its own class.
 */
export function checkKafkaConnection(connection: unknown): void {
  if (typeof (connection as Partial<KafkaConnection> | undefined)?.driver?.producer !== 'function') {
    throw new FerryConfigError('connection', `must be a KafkaConnection, got ${received(connection)}`);
  }
}

export function resolveConsumerOptions(options: ConsumerOptions): ResolvedConsumerOptions {
  options = knownKeysOption('', options, CONSUMER_KEYS);
  const defaults = DEFAULTS.consumer;
  checkKafkaConnection(options.connection);
  const topics = [...(options.topics ?? []), ...(options.topic === undefined ? [] : [options.topic])];
  if (topics.length === 0) throw new FerryConfigError('topics', 'give `topic` or a non-empty `topics`');
  topics.forEach((topic, index) => topicName(`topics[${index}]`, topic));
  const deadLetter = knownKeysOption('deadLetter.', options.deadLetter, ['topic', 'sendRetries']);
  if (deadLetter !== undefined) options = { ...options, deadLetter };
  const deadLetterTopic = resolveDeadLetterTopic(options.deadLetter?.topic, topics);
  const sessionTimeoutMs = timerOption(
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
    deadLetterSendRetries: integer(
      'deadLetter.sendRetries',
      options.deadLetter?.sendRetries ?? defaults.deadLetter.sendRetries,
      1,
      100,
    ),
    identity: functionOption('identity', options.identity) ?? null,
    tenant: checkTenantSource(options.tenant),
    tombstones: oneOfOption('tombstones', options.tombstones ?? defaults.tombstones, TOMBSTONE_POLICIES),
    fromBeginning: booleanOption('fromBeginning', options.fromBeginning ?? defaults.fromBeginning),
    maxBatchSize: integer('maxBatchSize', options.maxBatchSize ?? defaults.maxBatchSize, 1, 10_000),
    sessionTimeoutMs,
    heartbeatIntervalMs:
      options.heartbeatIntervalMs === undefined
        ? Math.min(defaults.heartbeatIntervalMs, Math.floor(sessionTimeoutMs / 3))
        : belowOption('heartbeatIntervalMs', integer('heartbeatIntervalMs', options.heartbeatIntervalMs, 1), {
            name: 'sessionTimeoutMs',
            value: sessionTimeoutMs,
            given: options.sessionTimeoutMs !== undefined,
          }),
    rebalanceTimeoutMs: timerOption(
      'rebalanceTimeoutMs',
      options.rebalanceTimeoutMs ?? defaults.rebalanceTimeoutMs,
      1,
    ),
    partitionsConsumedConcurrently: partitionsConsumedConcurrently(options),
    maxWaitTimeMs: timerOption(
      'maxWaitTimeMs',
      options.maxWaitTimeMs ?? defaults.maxWaitTimeMs,
      MIN_MAX_WAIT_TIME_MS,
    ),
    metadataMaxAgeMs: timerOption(
      'metadataMaxAgeMs',
      options.metadataMaxAgeMs ?? defaults.metadataMaxAgeMs,
      1,
    ),
    closeTimeoutMs: timerOption('closeTimeoutMs', options.closeTimeoutMs ?? defaults.closeTimeoutMs, 1),
    retryBackoff: resolveBackoff('retryBackoff', options.retryBackoff, defaults.retryBackoff),
    reconnectBackoff: resolveBackoff('reconnectBackoff', options.reconnectBackoff, defaults.reconnectBackoff),
    logger: guardLogger(loggerOption('logger', options.logger) ?? options.connection.logger),
    observer: functionOption('observer', options.observer),
    random: functionOption('random', options.random) ?? Math.random,
  };
}

/**
 * `partitionsConsumedConcurrently`: kafkajs only. @platformatic/kafka streams every assigned
 * partition and ferry handles them one at a time, so a value other than 1 there is refused
 * rather than ignored.
 */
function partitionsConsumedConcurrently(options: ConsumerOptions): number {
  const value = integer(
    'partitionsConsumedConcurrently',
    options.partitionsConsumedConcurrently ?? DEFAULTS.consumer.partitionsConsumedConcurrently,
    1,
  );
  if (value !== 1 && options.connection.driver.name !== 'kafkajs') {
    throw new FerryConfigError(
      'partitionsConsumedConcurrently',
      `is supported on the kafkajs client only; this connection uses @platformatic/kafka, which handles one partition at a time (leave it out or 1), got ${value}`,
    );
  }
  return value;
}

/**
 * The dead-letter topic of a source topic. A function's answer is checked on every call: one
 * that throws (anything) or is no topic name (a number, a Promise: it must answer synchronously)
 * fails the dead-letter send with a FerryConfigError naming `deadLetter.topic`, so the partition
 * is held and retried after its backoff, the records neither committed nor sent elsewhere. A
 * dead-letter topic that is one of the consumed `topics` is refused (at once for a name, the
 * default suffix included; per call for a function): every rejected record would be read back,
 * rejected and produced again, for ever.
 */
function resolveDeadLetterTopic(
  option: KafkaDeadLetterOptions['topic'],
  topics: readonly string[],
): (sourceTopic: string) => string {
  const notConsumed = (name: string): string => {
    if (topics.includes(name)) {
      throw new FerryConfigError(
        'deadLetter.topic',
        `${name} is a consumed topic: a record dead-lettered into it would be read back and rejected again, for ever`,
      );
    }
    return name;
  };
  if (typeof option === 'function') {
    return (sourceTopic) => {
      let answer: unknown;
      try {
        answer = option(sourceTopic);
      } catch (error) {
        throw new FerryConfigError(
          'deadLetter.topic',
          `the function threw: ${describeTransportError(error)}`,
        );
      }
      discardAnswer(answer);
      return notConsumed(topicName('deadLetter.topic', answer));
    };
  }
  if (option === undefined) {
    const suffix = DEFAULTS.consumer.deadLetter.topicSuffix;
    topics.forEach((topic) => notConsumed(`${topic}${suffix}`));
    return (topic) => `${topic}${suffix}`;
  }
  const name = notConsumed(topicName('deadLetter.topic', option));
  return () => name;
}

/** Kafka's rule for a topic name: 1 to 249 of `a-z A-Z 0-9 . _ -`, and not `.` or `..`. */
const TOPIC_NAME = /^[a-zA-Z0-9._-]{1,249}$/;

/** A topic name the brokers can accept (they refuse any other on every try, for ever). */
function topicName(option: string, value: unknown): string {
  const name = nonEmpty(option, value);
  if (!TOPIC_NAME.test(name) || name === '.' || name === '..') {
    throw new FerryConfigError(
      option,
      `must be a Kafka topic name (1 to 249 of a-z A-Z 0-9 . _ -, not . or ..), got ${received(name)}`,
    );
  }
  return name;
}
