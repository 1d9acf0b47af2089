import type { Message } from 'amqplib';
import { FerryConfigError, type Logger } from '@ferry/core';
import {
  booleanOption,
  checkTenantSource,
  functionOption,
  integerOption as integer,
  timerOption,
  knownKeysOption,
  nonEmptyOption as nonEmpty,
  resolveBackoff,
  type BackoffPolicy,
  received,
  type OptionKeys,
  type TenantSource,
  type TransportConsumerEvent,
  type TransportObserver,
  loggerOption,
} from '@ferry/core/transport';
import { contentTypeOptionFault } from './contentType';
import { RabbitConnection, refuseConnection } from './connection';
import type { DecodeOptions, DeliveryExtractor } from './delivery';
import { DEFAULTS, resolveConnectionOptions, type ConnectionOptions } from './options';
import { retryTiers } from './retryTiers';
import { pickTopology, workQueueNames, type WorkQueueNames, type WorkQueueTopology } from './topology';

export interface RabbitConsumerOptions extends WorkQueueTopology {
  /** A shared RabbitConnection, or options / a URL for a connection this consumer owns. */
  connection: RabbitConnection | ConnectionOptions | string;
  /** The inbox consumer (handler) name deliveries are accepted for. Required. */
  consumer: string;
  /**
   * Unacknowledged deliveries the broker may push. Default 250. They are held in memory until
   * their batch is settled: at most prefetch × maxBodyBytes, plus each one's properties and headers
   * (its content header frame: at most frame_max on the wire, several times that decoded).
   */
  prefetch?: number;
  /** Most deliveries per acceptMany call. Default: prefetch. */
  maxBatchSize?: number;
  /**
   * Batches whose acceptMany may run at once. Deliveries that arrive while every batch is
   * being accepted wait for the next free one. Each delivery is still acked only after its own
   * batch committed; the inbox guarantees no processing order, so batches may commit in any
   * order. Default 1 when maxBatchSize is prefetch or more (the default: one batch can take
   * every delivery the broker may push, and a second would only split them into smaller
   * batches), else 2.
   */
  maxBatchesInFlight?: number;
  /**
   * Identity for messages without ferry's header or an AMQP messageId. Not called for a delivery
   * whose body was not read (over maxBodyBytes): it is dead-lettered payload_too_large.
   */
  identity?: DeliveryExtractor;
  /**
   * Where a delivery's tenant comes from: `'header'` (default; x-ferry-tenant-id, which any
   * producer can set), `{ fixed: 'acme' }` (the queue's tenant; a header naming another is
   * dead-lettered as `tenant_mismatch`) or `(message) => string | null`.
   */
  tenant?: TenantSource<Message>;
  /**
   * Payloads above this (UTF-8 bytes of JSON.stringify, as the inbox measures) are dead-lettered.
   * Default: the acceptor's maxPayloadBytes.
   */
  maxPayloadBytes?: number;
  /**
   * The largest body the consumer reads, in bytes. A delivery whose content header announces more
   * is dead-lettered (`payload_too_large`) without its body being kept: its bytes are dropped as
   * they arrive, and its dead-letter copy has an empty body. Default: 16 × maxPayloadBytes, at
   * least 1 MiB (DEFAULTS.maxBodyBytes): 4 MiB at the inbox's default 256 KiB.
   */
  maxBodyBytes?: number;
  /** Accepted content types (parameters ignored). Default ['application/json']. */
  contentTypes?: readonly string[];
  /** Treat a delivery without content type as JSON. Default true. */
  acceptMissingContentType?: boolean;
  /**
   * Trips through the retry queues before a delivery whose acceptance keeps failing is
   * dead-lettered. Default 5. An outage (acceptance failing batch-wide: database unavailable,
   * pool exhausted, admission, timeout) spends none: the batch is held unacked and retried.
   */
  maxTransportRetries?: number;
  /**
   * Delay of each trip, rounded up to a retry tier (see retryTiers), and between the attempts
   * of a batch held through an outage. Default 1 s doubling to 60 s, no jitter.
   */
  retryBackoff?: Partial<BackoffPolicy>;
  /** Declare the work queue, retry and dead-letter topology on every (re)connect. Default true. */
  declareTopology?: boolean;
  /** Deadline for the broker to confirm a copy sent to the retry or dead-letter exchange. Default 10000. */
  confirmTimeoutMs?: number;
  /**
   * The longest close() waits for the consumer to finish (the batches in flight: their acceptance,
   * copies and acks; the broker's answers to its cancel and closes) before it destroys what is
   * left of it: its connection's socket when it owns the connection, else its channels. A database
   * that does not answer the acceptance (a lock held on the inbox table) held close() for as long
   * as that took. A delivery not acked then goes back to the queue and is answered as a duplicate
   * if its acceptance committed. Default 10,000.
   */
  closeTimeoutMs?: number;
  logger?: Logger;
  /**
   * Told what the consumer does (through safeEmit, `transport: 'rabbitmq'`, `source`: the work
   * queue): received, accepted, settled (acks), dead-lettered, acceptance-failed (the retry
   * tiers), acceptance-unavailable / -recovered (an outage), connected, disconnected,
   * error (a copy the broker returned: no queue took it).
   */
  observer?: TransportObserver<TransportConsumerEvent>;
  /** Random source for retry jitter. */
  random?: () => number;
}

/** Every consumer option key; unknown keys are rejected (FERRY_CONFIG_INVALID). */
export const CONSUMER_OPTION_KEYS = {
  connection: true,
  consumer: true,
  prefetch: true,
  maxBatchSize: true,
  maxBatchesInFlight: true,
  identity: true,
  tenant: true,
  maxPayloadBytes: true,
  maxBodyBytes: true,
  contentTypes: true,
  acceptMissingContentType: true,
  maxTransportRetries: true,
  retryBackoff: true,
  declareTopology: true,
  confirmTimeoutMs: true,
  closeTimeoutMs: true,
  logger: true,
  observer: true,
  random: true,
  queue: true,
  deadLetter: true,
  retryQueue: true,
  retryTiersMs: true,
  bindings: true,
} as const satisfies OptionKeys<RabbitConsumerOptions>;

/** A consumer's options, checked once, with every default filled in. */
export interface ResolvedConsumerOptions {
  readonly connection: RabbitConsumerOptions['connection'];
  readonly names: WorkQueueNames;
  /** The topology to declare on every (re)connect; null when `declareTopology` is false. */
  readonly topology: WorkQueueTopology | null;
  readonly prefetch: number;
  readonly maxBatchSize: number;
  readonly maxBatchesInFlight: number;
  readonly decode: DecodeOptions;
  /** The largest body read (maxBodyBytes); larger ones are refused unread (bodyGuard.ts). */
  readonly maxBodyBytes: number;
  readonly maxTransportRetries: number;
  readonly retryBackoff: BackoffPolicy;
  readonly confirmTimeoutMs: number;
  readonly closeTimeoutMs: number;
  readonly logger: Logger | undefined;
  readonly observer: TransportObserver<TransportConsumerEvent> | undefined;
  readonly random: (() => number) | undefined;
}

/** maxBodyBytes by default (DEFAULTS.maxBodyBytes), within the safe integers. */
function defaultBodyBytes(maxPayloadBytes: number): number {
  return Math.min(
    Number.MAX_SAFE_INTEGER,
    Math.max(DEFAULTS.maxBodyBytes.least, DEFAULTS.maxBodyBytes.perPayloadByte * maxPayloadBytes),
  );
}

/**
 * Checks a consumer's options (unknown keys, bounds, names) and fills the defaults;
 * `maxPayloadBytes` defaults to the acceptor's. Throws FerryConfigError naming the option.
 */
export function resolveConsumerOptions(
  options: RabbitConsumerOptions,
  acceptorMaxPayloadBytes: number,
): ResolvedConsumerOptions {
  options = knownKeysOption('', options, CONSUMER_OPTION_KEYS);
  checkConnection(options.connection);
  const maxTransportRetries = integer(
    'maxTransportRetries',
    options.maxTransportRetries ?? DEFAULTS.maxTransportRetries,
    0,
  );
  const retryBackoff = resolveBackoff('retryBackoff', options.retryBackoff, DEFAULTS.retryBackoff);
  const topology: WorkQueueTopology = {
    ...pickTopology(options),
    retryTiersMs: options.retryTiersMs ?? retryTiers(retryBackoff, maxTransportRetries),
  };
  const names = workQueueNames(topology);
  const prefetch = integer('prefetch', options.prefetch ?? DEFAULTS.prefetch, 1, 65_535);
  const contentTypes = options.contentTypes ?? DEFAULTS.contentTypes;
  if (!Array.isArray(contentTypes) || contentTypes.some((t) => typeof t !== 'string' || t.length === 0)) {
    throw new FerryConfigError(
      'contentTypes',
      `must be an array of content types, got ${received(contentTypes)}`,
    );
  }
  if (contentTypes.length === 0) throw new FerryConfigError('contentTypes', 'must name at least one type');
  for (const contentType of contentTypes) {
    const fault = contentTypeOptionFault(contentType);
    if (fault !== null) throw new FerryConfigError('contentTypes', fault);
  }
  const maxBatchSize = integer('maxBatchSize', options.maxBatchSize ?? prefetch, 1);
  const maxPayloadBytes = integer('maxPayloadBytes', options.maxPayloadBytes ?? acceptorMaxPayloadBytes, 1);
  return {
    connection: options.connection,
    names,
    topology: booleanOption('declareTopology', options.declareTopology ?? DEFAULTS.declareTopology)
      ? { ...topology, retryTiersMs: names.retryTiersMs }
      : null,
    prefetch,
    maxBatchSize,
    maxBatchesInFlight: integer(
      'maxBatchesInFlight',
      options.maxBatchesInFlight ?? (maxBatchSize >= prefetch ? 1 : DEFAULTS.maxBatchesInFlight),
      1,
      1_000,
    ),
    decode: {
      consumer: nonEmpty('consumer', options.consumer),
      maxPayloadBytes,
      contentTypes: contentTypes.map((t) => t.toLowerCase()),
      acceptMissingContentType: booleanOption(
        'acceptMissingContentType',
        options.acceptMissingContentType ?? DEFAULTS.acceptMissingContentType,
      ),
      ...(options.identity ? { identity: functionOption('identity', options.identity) } : {}),
      tenant: checkTenantSource(options.tenant),
    },
    maxBodyBytes: integer('maxBodyBytes', options.maxBodyBytes ?? defaultBodyBytes(maxPayloadBytes), 1),
    maxTransportRetries,
    retryBackoff,
    confirmTimeoutMs: timerOption(
      'confirmTimeoutMs',
      options.confirmTimeoutMs ?? DEFAULTS.confirmTimeoutMs,
      1,
    ),
    closeTimeoutMs: timerOption('closeTimeoutMs', options.closeTimeoutMs ?? DEFAULTS.closeTimeoutMs, 1),
    logger: loggerOption('logger', options.logger),
    observer: functionOption('observer', options.observer),
    random: functionOption('random', options.random),
  };
}

/**
 * The consumer's own connection (a URL or options) checked here, before anything connects, with
 * its options named under `connection.`; a shared RabbitConnection was checked when made.
 */
function checkConnection(connection: RabbitConsumerOptions['connection']): void {
  if (connection instanceof RabbitConnection) return;
  if (typeof connection === 'string') resolveConnectionOptions({ url: connection }, 'connection.');
  else if (typeof connection === 'object' && connection !== null && !Array.isArray(connection))
    resolveConnectionOptions(connection, 'connection.');
  else refuseConnection(connection);
}
