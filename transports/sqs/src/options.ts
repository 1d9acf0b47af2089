import { FerryConfigError, type Logger } from '@ferry/core';
import {
  guardLogger,
  checkTenantSource,
  functionOption,
  defaultLogger,
  integerOption as integer,
  timerOption,
  nonEmptyOption as nonEmpty,
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
  type TransportPublisherEvent,
  loggerOption,
} from '@ferry/core/transport';
import type { Message, SQSClient } from '@aws-sdk/client-sqs';
import { MAX_VISIBILITY_SECONDS } from './backoff';
import { deadLetterQueueUrlOption } from './deadLetterOption';
import { queueReferenceFault } from './queueUrl';

/** SQS's classic per-message and per-batch limit; AWS raised both to 1 MiB in 2025. */
export const SQS_CLASSIC_LIMIT_BYTES = 262_144;
const SQS_MAX_LIMIT_BYTES = 1_048_576;

/** Every default in one table; the package README quotes it. */
export const DEFAULTS = {
  region: 'us-east-1',
  maxAttempts: 3,
  maxBatchBytes: SQS_CLASSIC_LIMIT_BYTES,
  maxMessageBytes: SQS_CLASSIC_LIMIT_BYTES,
  maxBatchSize: 10,
  waitTimeSeconds: 20,
  visibilityTimeoutSeconds: 30,
  retryBackoff: { initialMs: 1_000, maxMs: 300_000, multiplier: 2, jitter: 'full' } satisfies BackoffPolicy,
  reconnectBackoff: { initialMs: 100, maxMs: 10_000, multiplier: 2, jitter: 'full' } satisfies BackoffPolicy,
  confirmTimeoutMs: 30_000,
  setupTimeoutMs: 30_000,
  deleteAttempts: 3,
  closeTimeoutMs: 10_000,
} as const;

export interface ConnectionOptions {
  /** SQS endpoint, e.g. http://127.0.0.1:9324 for ElasticMQ; AWS's regional endpoint when omitted. */
  endpoint?: string;
  /** Default `AWS_REGION`, else us-east-1 (with `client`: the client's). */
  region?: string;
  /**
   * Static credentials (the shape the AWS credential providers and STS answer), or a credential
   * provider function, handed to the SDK as given; the SDK's default provider chain when omitted.
   * A provider that does not answer holds no request past its deadline: the request fails with
   * FERRY_TRANSPORT_ERROR naming the provider, and the next request asks it again.
   */
  credentials?: StaticCredentials | (() => Promise<StaticCredentials>);
  /**
   * SDK attempts per request (its own retry of throttling and network errors). On the client the
   * connection creates, a wait between two attempts ends with the request (its deadline, its
   * owner's close()): none runs on after close() (sdkRetries.ts; the SDK's retry quota is not
   * kept). A given `client` keeps its own retry strategy, whose waits do run on.
   */
  maxAttempts?: number;
  /**
   * Deadline (ms) of the requests no other option bounds: connect(), the topology helpers, a
   * queue-name lookup, the consumer's check of its queue before the first poll. Default 30000.
   */
  setupTimeoutMs?: number;
  /**
   * Use this client instead of creating one; close() then leaves it open. Its own config holds
   * the endpoint, region (the dead-letter region check reads it), credentials and maxAttempts:
   * giving any of these options with `client` is refused (FerryConfigError).
   */
  client?: SQSClient;
  logger?: Logger;
}

export interface ResolvedConnectionOptions {
  readonly endpoint: string | undefined;
  readonly region: string;
  readonly credentials: ConnectionOptions['credentials'];
  readonly maxAttempts: number;
  readonly setupTimeoutMs: number;
  readonly client: SQSClient | undefined;
  readonly logger: Logger;
}

const CONNECTION_KEYS = {
  endpoint: true,
  region: true,
  credentials: true,
  maxAttempts: true,
  setupTimeoutMs: true,
  client: true,
  logger: true,
} as const satisfies OptionKeys<ConnectionOptions>;

/** AWS static credentials, as `@aws-sdk/types`' AwsCredentialIdentity. */
export interface StaticCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  expiration?: Date;
  credentialScope?: string;
  accountId?: string;
}

const CREDENTIAL_KEYS = {
  accessKeyId: true,
  secretAccessKey: true,
  sessionToken: true,
  expiration: true,
  credentialScope: true,
  accountId: true,
} as const satisfies OptionKeys<StaticCredentials>;

export function resolveConnectionOptions(options: ConnectionOptions = {}): ResolvedConnectionOptions {
  options = knownKeysOption('', options, CONNECTION_KEYS);
  if (
    options.endpoint !== undefined &&
    (typeof options.endpoint !== 'string' || !/^https?:\/\//.test(options.endpoint))
  ) {
    throw new FerryConfigError(
      'endpoint',
      `must be an http:// or https:// URL, got ${received(options.endpoint)}`,
    );
  }
  const region = nonEmpty('region', options.region ?? process.env.AWS_REGION ?? DEFAULTS.region);
  // Only the keys: a credential's value is never shown.
  if (typeof options.credentials !== 'function') {
    const credentials = knownKeysOption('credentials.', options.credentials, CREDENTIAL_KEYS);
    if (credentials !== undefined) options = { ...options, credentials };
  }
  if (options.client !== undefined && typeof options.client?.send !== 'function') {
    throw new FerryConfigError('client', `must be an SQSClient, got ${received(options.client)}`);
  }
  if (options.client !== undefined) refuseClientConflicts(options);
  return {
    endpoint: options.endpoint,
    region,
    credentials: options.credentials,
    maxAttempts: integer('maxAttempts', options.maxAttempts ?? DEFAULTS.maxAttempts, 1, 20),
    setupTimeoutMs: timerOption('setupTimeoutMs', options.setupTimeoutMs ?? DEFAULTS.setupTimeoutMs, 1),
    client: options.client,
    logger: guardLogger(loggerOption('logger', options.logger) ?? defaultLogger('ferry.sqs')),
  };
}

/** The options a given `client` already holds (its own config): never ignored in silence, refused. */
const CLIENT_OWN_OPTIONS = ['endpoint', 'region', 'credentials', 'maxAttempts'] as const;

function refuseClientConflicts(options: ConnectionOptions): void {
  const given = CLIENT_OWN_OPTIONS.filter((key) => options[key] !== undefined);
  if (given.length > 0) {
    throw new FerryConfigError(
      'client',
      `is given with ${given.join(', ')}, which a client holds in its own config and which would be ignored: set them on the SQSClient, or pass them without client`,
    );
  }
}

export interface PublisherOptions {
  /** Queue (URL or name) for messages whose destination is null and whose type has no route. */
  defaultDestination?: string;
  /** Queue (URL or name) per event type, used when the message names no destination. */
  routes?: Readonly<Record<string, string>>;
  /** Upper bound of one SendMessageBatch request (bodies + attributes). */
  maxBatchBytes?: number;
  /** Upper bound of one message (body + attributes); larger ones are reported permanent. */
  maxMessageBytes?: number;
  /**
   * A request not answered within this many ms is abandoned and its messages reported
   * retryable (not sent). Default 30000.
   */
  confirmTimeoutMs?: number;
  /** Default: the connection's logger. */
  logger?: Logger;
  /**
   * Told how each publish call ended (through safeEmit, `transport: 'sqs'`, `destination`: the
   * queue as routed, URL or name): `published`, `publish-failed`.
   */
  observer?: TransportObserver<TransportPublisherEvent>;
}

export interface ResolvedPublisherOptions {
  readonly defaultDestination: string | null;
  readonly routes: Readonly<Record<string, string>>;
  readonly maxBatchBytes: number;
  readonly maxMessageBytes: number;
  readonly confirmTimeoutMs: number;
  readonly logger: Logger | undefined;
  readonly observer: TransportObserver<TransportPublisherEvent> | undefined;
}

const PUBLISHER_KEYS = {
  defaultDestination: true,
  routes: true,
  maxBatchBytes: true,
  maxMessageBytes: true,
  confirmTimeoutMs: true,
  logger: true,
  observer: true,
} as const satisfies OptionKeys<PublisherOptions>;

/** A queue's URL or name option: a non-empty string that names a queue (queueReferenceFault). */
function queueOption(name: string, value: unknown): string {
  const queue = nonEmpty(name, value);
  const fault = queueReferenceFault(queue);
  if (fault !== null) throw new FerryConfigError(name, fault);
  return queue;
}

export function resolvePublisherOptions(options: PublisherOptions = {}): ResolvedPublisherOptions {
  options = knownKeysOption('', options, PUBLISHER_KEYS);
  const maxBatchBytes = integer(
    'maxBatchBytes',
    options.maxBatchBytes ?? DEFAULTS.maxBatchBytes,
    1_024,
    SQS_MAX_LIMIT_BYTES,
  );
  const maxMessageBytes = integer(
    'maxMessageBytes',
    options.maxMessageBytes ?? DEFAULTS.maxMessageBytes,
    1_024,
    maxBatchBytes,
  );
  for (const [type, queue] of Object.entries(options.routes ?? {})) queueOption(`routes.${type}`, queue);
  return {
    defaultDestination:
      options.defaultDestination === undefined
        ? null
        : queueOption('defaultDestination', options.defaultDestination),
    // No prototype: an event type named like an Object member (`constructor`, `toString`) found the
    // inherited member as its queue and failed its whole publish (review 47).
    routes: Object.assign(Object.create(null) as Record<string, string>, options.routes),
    maxBatchBytes,
    maxMessageBytes,
    confirmTimeoutMs: timerOption(
      'confirmTimeoutMs',
      options.confirmTimeoutMs ?? DEFAULTS.confirmTimeoutMs,
      1,
    ),
    logger: loggerOption('logger', options.logger),
    observer: functionOption('observer', options.observer),
  };
}

/** Where invalid messages go: a dead-letter queue ferry sends to, or the queue's redrive policy. */
export type DeadLetterOptions =
  /**
   * Copy to the queue at `queueUrl` (a URL, not a name; not the consumer's queue; FIFO exactly
   * when the consumer's queue is), then delete. attach checks that it answers (else it retries,
   * receiving nothing) and that it is not the consumer's queue or of another region (else
   * FerryConfigError and the consumer stops).
   */
  | { readonly mode: 'queue'; readonly queueUrl: string }
  /**
   * Leave the message (visible again after the retry backoff) until the queue's redrive policy
   * moves it. attach checks that the queue has a RedrivePolicy; without one ready() rejects
   * with FerryConfigError and the consumer stops.
   */
  | { readonly mode: 'redrive' };

/** Returns the inbox message id of a received message, or null when it has none. */
export type IdentityExtractor = (message: Message) => string | null;

export interface ConsumerOptions {
  /** Queue URL, or a queue name resolved with GetQueueUrl. Required. */
  queueUrl: string;
  /** The inbox consumer (handler) name. Required. */
  consumer: string;
  /** Messages per ReceiveMessage (one batch, one acceptMany), 1 to 10. */
  maxBatchSize?: number;
  /**
   * Long-poll wait, 1 to 20 s. 0 (short polling) is refused: an empty queue would then be polled
   * in a tight loop, a request (billed by SQS) after another with no pause.
   */
  waitTimeSeconds?: number;
  /** Visibility timeout requested on receive and renewed while a batch is being accepted. */
  visibilityTimeoutSeconds?: number;
  /** How often the visibility of a batch in acceptance is renewed; default a third of the timeout. */
  extendEveryMs?: number;
  /** Visibility given to a batch whose acceptance failed, by its receive count. */
  retryBackoff?: Partial<BackoffPolicy>;
  /** Wait after a failed ReceiveMessage (the endpoint unreachable), by consecutive failures. */
  reconnectBackoff?: Partial<BackoffPolicy>;
  /** Default `{ mode: 'redrive' }`. */
  deadLetter?: DeadLetterOptions;
  /**
   * Default: ferry's `x-ferry-message-id` attribute, else the SQS MessageId (with
   * `envelope: 'sns'`, SNS's MessageId).
   */
  identity?: IdentityExtractor;
  /**
   * `'sns'`: the queue is subscribed to an SNS topic with raw message delivery off, so each body is
   * SNS's notification envelope: the payload is its `Message`, the attributes (ferry's identity,
   * tenant and type among them) its `MessageAttributes`, the default identity SNS's `MessageId`; a
   * body that is no notification is dead-lettered (`unparseable_body`). Default `'none'`: the body
   * is the payload as it is.
   */
  envelope?: 'none' | 'sns';
  /**
   * Where a message's tenant comes from: `'header'` (default; the x-ferry-tenant-id attribute,
   * which any producer can set), `{ fixed: 'acme' }` (the queue's tenant; an attribute naming
   * another is dead-lettered as `tenant_mismatch`) or `(message) => string | null`.
   */
  tenant?: TenantSource<Message>;
  /** DeleteMessageBatch attempts for entries reported in `Failed`. */
  deleteAttempts?: number;
  /**
   * The longest close() waits for the batch in hand (its acceptance, dead-letter copies, deletes,
   * visibility changes) before it aborts the consumer's requests in flight: a database that does
   * not answer the acceptance, or an SQS that stops answering (each step otherwise waited for up
   * to the visibility timeout), held close() for as long as that took. A message not deleted then
   * comes back after its visibility timeout and is answered as a duplicate if it was stored.
   * Default 10,000.
   */
  closeTimeoutMs?: number;
  /**
   * Told what the consumer does (through safeEmit, `transport: 'sqs'`, `source`: `queueUrl` as
   * given): received, accepted, settled (deletes), dead-lettered, acceptance-failed,
   * acceptance-unavailable / -recovered, connected, disconnected (a failed receive), error.
   */
  observer?: TransportObserver<TransportConsumerEvent>;
  logger?: Logger;
  random?: () => number;
}

export interface ResolvedConsumerOptions {
  readonly queueUrl: string;
  readonly consumer: string;
  readonly maxBatchSize: number;
  readonly waitTimeSeconds: number;
  readonly visibilityTimeoutSeconds: number;
  readonly extendEveryMs: number;
  readonly retryBackoff: BackoffPolicy;
  readonly reconnectBackoff: BackoffPolicy;
  readonly deadLetter: DeadLetterOptions;
  readonly identity: IdentityExtractor | null;
  readonly envelope: 'none' | 'sns';
  readonly tenant: TenantSource<Message>;
  readonly deleteAttempts: number;
  readonly closeTimeoutMs: number;
  readonly observer: TransportObserver<TransportConsumerEvent> | undefined;
  readonly logger: Logger | undefined;
  readonly random: () => number;
}

const CONSUMER_KEYS = {
  queueUrl: true,
  consumer: true,
  maxBatchSize: true,
  waitTimeSeconds: true,
  visibilityTimeoutSeconds: true,
  extendEveryMs: true,
  retryBackoff: true,
  reconnectBackoff: true,
  deadLetter: true,
  identity: true,
  envelope: true,
  deleteAttempts: true,
  closeTimeoutMs: true,
  observer: true,
  logger: true,
  random: true,
  tenant: true,
  connection: true,
} as const satisfies OptionKeys<ConsumerOptions & { connection: unknown }>;

/**
 * attachSqsConsumer's options: one snapshot (each option read once, knownKeysOption), so the
 * connection checked is the connection used and the options resolved are the ones read here.
 * `Connection`: the SqsConnection type (checked by shape, checkSqsConnection), named by the caller
 * (this file does not import connection.ts, which imports it).
 */
export function resolveAttachOptions<Connection>(given: ConsumerOptions & { readonly connection: unknown }): {
  readonly connection: Connection;
  readonly resolved: ResolvedConsumerOptions;
  readonly consumer: string;
} {
  const options = knownKeysOption('', given, CONSUMER_KEYS);
  checkSqsConnection(options.connection);
  const resolved = resolveConsumerOptions(options);
  return { connection: options.connection as Connection, resolved, consumer: resolved.consumer };
}

/** `connection` is attachSqsConsumer's own key, allowed here because it passes the whole object. */
export function resolveConsumerOptions(options: ConsumerOptions): ResolvedConsumerOptions {
  options = knownKeysOption('', options, CONSUMER_KEYS);
  const visibilityTimeoutSeconds = integer(
    'visibilityTimeoutSeconds',
    options.visibilityTimeoutSeconds ?? DEFAULTS.visibilityTimeoutSeconds,
    1,
    MAX_VISIBILITY_SECONDS,
  );
  checkConnection((options as { connection?: unknown }).connection);
  // Read once (a snapshot): `queueUrl` is refused afterwards unless the mode is 'queue'.
  const deadLetter: DeadLetterOptions = knownKeysOption(
    'deadLetter.',
    options.deadLetter ?? { mode: 'redrive' },
    ['mode', 'queueUrl'],
  );
  if (deadLetter.mode !== 'queue') knownKeysOption('deadLetter.', deadLetter, ['mode']);
  oneOfOption('deadLetter.mode', deadLetter.mode, ['queue', 'redrive'] as const);
  const queueUrl = queueOption('queueUrl', options.queueUrl);
  if (deadLetter.mode === 'queue') deadLetterQueueUrlOption(queueUrl, deadLetter.queueUrl);
  return {
    queueUrl,
    consumer: nonEmpty('consumer', options.consumer),
    maxBatchSize: integer('maxBatchSize', options.maxBatchSize ?? DEFAULTS.maxBatchSize, 1, 10),
    waitTimeSeconds: waitTimeSeconds(options.waitTimeSeconds),
    visibilityTimeoutSeconds,
    extendEveryMs:
      options.extendEveryMs === undefined
        ? Math.floor((visibilityTimeoutSeconds * 1000) / 3)
        : belowOption('extendEveryMs', integer('extendEveryMs', options.extendEveryMs, 50), {
            name: 'visibilityTimeoutSeconds × 1000',
            value: visibilityTimeoutSeconds * 1000,
            given: options.visibilityTimeoutSeconds !== undefined,
          }),
    retryBackoff: resolveBackoff('retryBackoff', options.retryBackoff, DEFAULTS.retryBackoff),
    reconnectBackoff: resolveBackoff('reconnectBackoff', options.reconnectBackoff, DEFAULTS.reconnectBackoff),
    deadLetter,
    identity: functionOption('identity', options.identity) ?? null,
    envelope: oneOfOption('envelope', options.envelope ?? 'none', ['none', 'sns'] as const),
    tenant: checkTenantSource(options.tenant),
    deleteAttempts: integer('deleteAttempts', options.deleteAttempts ?? DEFAULTS.deleteAttempts, 1, 10),
    closeTimeoutMs: timerOption('closeTimeoutMs', options.closeTimeoutMs ?? DEFAULTS.closeTimeoutMs, 1),
    observer: functionOption('observer', options.observer),
    logger: loggerOption('logger', options.logger),
    random: functionOption('random', options.random) ?? Math.random,
  };
}

/** The long-poll wait: 1 to 20, and 0 refused with its own reason (ConsumerOptions.waitTimeSeconds). */
function waitTimeSeconds(value: unknown): number {
  if (value === 0) {
    throw new FerryConfigError(
      'waitTimeSeconds',
      'must be 1 to 20, got 0: short polling would poll an empty queue in a tight loop, one billed request after another with no pause',
    );
  }
  return integer('waitTimeSeconds', value ?? DEFAULTS.waitTimeSeconds, 1, 20);
}

/** attachSqsConsumer's connection when given; resolveConsumerOptions called on its own has none. */
function checkConnection(connection: unknown): void {
  if (connection !== undefined) checkSqsConnection(connection);
}

/**
 * A publisher's or consumer's `connection`: an SqsConnection, by shape (a second copy of the
 * package makes connections of its own class), else FerryConfigError naming `connection` with the
 * value received (left out, it was a TypeError; a URL was taken and failed at the first publish).
 */
export function checkSqsConnection(connection: unknown): void {
  const shape = connection as { connect?: unknown; queueUrl?: unknown } | null;
  if (typeof shape?.connect !== 'function' || typeof shape.queueUrl !== 'function') {
    throw new FerryConfigError('connection', `must be an SqsConnection, got ${received(connection)}`);
  }
}
