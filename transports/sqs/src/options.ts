import {
  FerryConfigError,
  defaultLogger,
  integerOption as integer,
  nonEmptyOption as nonEmpty,
  resolveBackoff,
  type BackoffPolicy,
  type Logger,
} from '@ferry/core';
import type { Message, SQSClient } from '@aws-sdk/client-sqs';
import { MAX_VISIBILITY_SECONDS } from './backoff';

/** SQS's classic per-message and per-batch limit; AWS raised both to 1 MiB in 2025. */
export const SQS_CLASSIC_LIMIT_BYTES = 262_144;
const SQS_MAX_LIMIT_BYTES = 1_048_576;

/** Every default in one table; the package README quotes it. */
export const DEFAULTS = {
  region: 'us-east-1',
  maxAttempts: 3,
  maxBatchBytes: SQS_CLASSIC_LIMIT_BYTES,
  maxMessageBytes: SQS_CLASSIC_LIMIT_BYTES,
  maxMessages: 10,
  waitTimeSeconds: 20,
  visibilityTimeoutSeconds: 30,
  retryBackoff: { initialMs: 1_000, maxMs: 300_000, multiplier: 2, jitter: 'full' } satisfies BackoffPolicy,
  pollErrorBackoff: { initialMs: 100, maxMs: 10_000, multiplier: 2, jitter: 'full' } satisfies BackoffPolicy,
  deleteAttempts: 3,
} as const;

export interface ConnectionOptions {
  /** SQS endpoint, e.g. http://127.0.0.1:9324 for ElasticMQ; AWS's regional endpoint when omitted. */
  endpoint?: string;
  /** Default `AWS_REGION`, else us-east-1. */
  region?: string;
  /** Static credentials; the SDK's default provider chain when omitted. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** SDK attempts per request (its own retry of throttling and network errors). */
  maxAttempts?: number;
  /** Use this client instead of creating one; close() then leaves it open. */
  client?: SQSClient;
  logger?: Logger;
}

export interface ResolvedConnectionOptions {
  readonly endpoint: string | undefined;
  readonly region: string;
  readonly credentials: ConnectionOptions['credentials'];
  readonly maxAttempts: number;
  readonly client: SQSClient | undefined;
  readonly logger: Logger;
}

export function resolveConnectionOptions(options: ConnectionOptions = {}): ResolvedConnectionOptions {
  if (options.endpoint !== undefined && !/^https?:\/\//.test(options.endpoint)) {
    throw new FerryConfigError('endpoint', 'must be an http:// or https:// URL');
  }
  const region = options.region ?? process.env.AWS_REGION ?? DEFAULTS.region;
  if (region.length === 0) throw new FerryConfigError('region', 'must not be empty');
  return {
    endpoint: options.endpoint,
    region,
    credentials: options.credentials,
    maxAttempts: integer('maxAttempts', options.maxAttempts ?? DEFAULTS.maxAttempts, 1, 20),
    client: options.client,
    logger: options.logger ?? defaultLogger('ferry.sqs'),
  };
}

export interface PublisherOptions {
  /** Queue (URL or name) for messages whose destination is null and whose type has no route. */
  defaultQueue?: string;
  /** Queue (URL or name) per event type, used when the message names no destination. */
  routes?: Readonly<Record<string, string>>;
  /** Upper bound of one SendMessageBatch request (bodies + attributes). */
  maxBatchBytes?: number;
  /** Upper bound of one message (body + attributes); larger ones are reported permanent. */
  maxMessageBytes?: number;
}

export interface ResolvedPublisherOptions {
  readonly defaultQueue: string | null;
  readonly routes: Readonly<Record<string, string>>;
  readonly maxBatchBytes: number;
  readonly maxMessageBytes: number;
}

export function resolvePublisherOptions(options: PublisherOptions = {}): ResolvedPublisherOptions {
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
  for (const [type, queue] of Object.entries(options.routes ?? {})) nonEmpty(`routes.${type}`, queue);
  return {
    defaultQueue: options.defaultQueue === undefined ? null : nonEmpty('defaultQueue', options.defaultQueue),
    routes: { ...options.routes },
    maxBatchBytes,
    maxMessageBytes,
  };
}

/** Where invalid messages go: a dead-letter queue ferry sends to, or the queue's redrive policy. */
export type DeadLetterOptions =
  | { readonly mode: 'queue'; readonly queueUrl: string }
  /** Leave the message (visible again at once) until the queue's redrive policy moves it. */
  | { readonly mode: 'redrive' };

/** Returns the inbox message id of a received message, or null when it has none. */
export type IdentityExtractor = (message: Message) => string | null;

export interface ConsumerOptions {
  /** Queue URL, or a queue name resolved with GetQueueUrl. Required. */
  queueUrl: string;
  /** The inbox consumer (handler) name. Required. */
  consumer: string;
  /** Messages per ReceiveMessage, 1 to 10. */
  maxMessages?: number;
  /** Long-poll wait, 0 to 20 s. */
  waitTimeSeconds?: number;
  /** Visibility timeout requested on receive and renewed while a batch is being accepted. */
  visibilityTimeoutSeconds?: number;
  /** How often the visibility of a batch in acceptance is renewed; default a third of the timeout. */
  extendEveryMs?: number;
  /** Visibility given to a batch whose acceptance failed, by its receive count. */
  retryBackoff?: Partial<BackoffPolicy>;
  /** Wait after a failed ReceiveMessage, by consecutive failures. */
  pollErrorBackoff?: Partial<BackoffPolicy>;
  /** Default `{ mode: 'redrive' }`. */
  deadLetter?: DeadLetterOptions;
  /** Default: ferry's `x-ferry-message-id` attribute, else the SQS MessageId. */
  identity?: IdentityExtractor;
  /** DeleteMessageBatch attempts for entries reported in `Failed`. */
  deleteAttempts?: number;
  observer?: (event: SqsConsumerEvent) => unknown;
  logger?: Logger;
  random?: () => number;
}

export interface ResolvedConsumerOptions {
  readonly queueUrl: string;
  readonly consumer: string;
  readonly maxMessages: number;
  readonly waitTimeSeconds: number;
  readonly visibilityTimeoutSeconds: number;
  readonly extendEveryMs: number;
  readonly retryBackoff: BackoffPolicy;
  readonly pollErrorBackoff: BackoffPolicy;
  readonly deadLetter: DeadLetterOptions;
  readonly identity: IdentityExtractor | null;
  readonly deleteAttempts: number;
  readonly observer: ((event: SqsConsumerEvent) => unknown) | undefined;
  readonly logger: Logger | undefined;
  readonly random: () => number;
}

/** What the consumer reports to `observer`, each through safeEmit. */
export type SqsConsumerEvent =
  /** After every ReceiveMessage, empty ones included. */
  | { readonly kind: 'polled'; readonly count: number }
  | { readonly kind: 'received'; readonly count: number }
  | { readonly kind: 'accepted'; readonly messageIds: readonly string[] }
  | { readonly kind: 'deleted'; readonly count: number }
  | { readonly kind: 'visibility_extended'; readonly count: number }
  | { readonly kind: 'acceptance_failed'; readonly error: unknown; readonly visibilitySeconds: number }
  | { readonly kind: 'dead_lettered'; readonly messageId: string | null; readonly reason: string }
  | { readonly kind: 'error'; readonly error: unknown };

export function resolveConsumerOptions(options: ConsumerOptions): ResolvedConsumerOptions {
  const visibilityTimeoutSeconds = integer(
    'visibilityTimeoutSeconds',
    options.visibilityTimeoutSeconds ?? DEFAULTS.visibilityTimeoutSeconds,
    1,
    MAX_VISIBILITY_SECONDS,
  );
  const deadLetter = options.deadLetter ?? { mode: 'redrive' };
  if (deadLetter.mode === 'queue') nonEmpty('deadLetter.queueUrl', deadLetter.queueUrl);
  else if (deadLetter.mode !== 'redrive') {
    throw new FerryConfigError('deadLetter.mode', "must be 'queue' or 'redrive'");
  }
  return {
    queueUrl: nonEmpty('queueUrl', options.queueUrl),
    consumer: nonEmpty('consumer', options.consumer),
    maxMessages: integer('maxMessages', options.maxMessages ?? DEFAULTS.maxMessages, 1, 10),
    waitTimeSeconds: integer('waitTimeSeconds', options.waitTimeSeconds ?? DEFAULTS.waitTimeSeconds, 0, 20),
    visibilityTimeoutSeconds,
    extendEveryMs: integer(
      'extendEveryMs',
      options.extendEveryMs ?? Math.floor((visibilityTimeoutSeconds * 1000) / 3),
      50,
      visibilityTimeoutSeconds * 1000 - 1,
    ),
    retryBackoff: resolveBackoff('retryBackoff', options.retryBackoff, DEFAULTS.retryBackoff),
    pollErrorBackoff: resolveBackoff('pollErrorBackoff', options.pollErrorBackoff, DEFAULTS.pollErrorBackoff),
    deadLetter,
    identity: options.identity ?? null,
    deleteAttempts: integer('deleteAttempts', options.deleteAttempts ?? DEFAULTS.deleteAttempts, 1, 10),
    observer: options.observer,
    logger: options.logger,
    random: options.random ?? Math.random,
  };
}
