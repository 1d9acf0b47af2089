import { FerryConfigError, type Logger } from '@ferry/core';
import {
  checkTenantSource,
  functionOption,
  guardLogger,
  integerOption as integer,
  knownKeysOption,
  received,
  nonEmptyOption as nonEmpty,
  resolveBackoff,
  type BackoffPolicy,
  TRANSPORT_RETRIES,
  type OptionKeys,
  type TenantSource,
  type TransportConsumerEvent,
  type TransportObserver,
  loggerOption,
} from '@ferry/core/transport';
import { InMemoryBroker, type InMemoryDelivery } from './inMemoryBroker';

export interface InMemoryConsumerOptions {
  readonly broker: InMemoryBroker;
  readonly queue: string;
  /** The inbox consumer (handler) name deliveries are accepted for. */
  readonly consumer: string;
  /** Deliveries per `acceptMany` call. Default 10. */
  readonly maxBatchSize?: number;
  /**
   * Trips back to the queue before a delivery whose acceptance keeps failing (for its whole batch,
   * with a retriable error that is not an outage) is dead-lettered (`transport_retries_exhausted`).
   * Default 5, as on RabbitMQ. An outage (acceptance held) spends none.
   */
  readonly maxTransportRetries?: number;
  /**
   * Wait of a delivery whose acceptance failed before it is back at the tail of the queue, by its
   * transport attempts (RabbitMQ's retry tiers), and between the attempts of a batch held through
   * an outage. Default 50 ms doubling to 1 s, full jitter.
   */
  readonly retryBackoff?: Partial<BackoffPolicy>;
  /**
   * Wait before the consumer looks again for a queue that does not exist (each look that fails is
   * a `disconnected` event), as the real consumers' `reconnectBackoff`. Default 50 ms doubling to
   * 1 s, full jitter.
   */
  readonly reconnectBackoff?: Partial<BackoffPolicy>;
  /** Identity of deliveries with neither ferry's header nor a native `messageId`. */
  readonly identity?: (delivery: InMemoryDelivery) => string | null | undefined;
  /** Where a delivery's tenant comes from, as on every transport (default `'header'`). */
  readonly tenant?: TenantSource<InMemoryDelivery>;
  /** Where the consumer's warnings (a queue that does not exist) and a throwing observer are logged. Default: none. */
  readonly logger?: Logger;
  /**
   * Told what the consumer does (through safeEmit, `transport: 'memory'`, `source`: the queue),
   * as every ferry transport does: connected (consuming its queue), disconnected (the queue does
   * not exist), received, accepted, settled, dead-lettered, acceptance-failed.
   */
  readonly observer?: TransportObserver<TransportConsumerEvent>;
  /** Random source for retry jitter. */
  readonly random?: () => number;
}

/** Every option key; unknown keys are rejected (FERRY_CONFIG_INVALID), as on every transport. */
const KEYS = {
  broker: true,
  queue: true,
  consumer: true,
  maxBatchSize: true,
  maxTransportRetries: true,
  retryBackoff: true,
  reconnectBackoff: true,
  identity: true,
  tenant: true,
  logger: true,
  observer: true,
  random: true,
} as const satisfies OptionKeys<InMemoryConsumerOptions>;

export interface ResolvedInMemoryConsumerOptions {
  readonly broker: InMemoryBroker;
  readonly queue: string;
  readonly consumer: string;
  readonly maxBatchSize: number;
  readonly maxTransportRetries: number;
  readonly retryBackoff: BackoffPolicy;
  readonly reconnectBackoff: BackoffPolicy;
  readonly identity: InMemoryConsumerOptions['identity'];
  readonly tenant: TenantSource<InMemoryDelivery>;
  readonly logger: Logger | undefined;
  readonly observer: TransportObserver<TransportConsumerEvent> | undefined;
  readonly random: (() => number) | undefined;
}

const DEFAULT_RETRY: BackoffPolicy = { initialMs: 50, maxMs: 1_000, multiplier: 2, jitter: 'full' };

/** Checks the options once (unknown keys, names, bounds) and fills the defaults. */
export function resolveInMemoryConsumerOptions(
  options: InMemoryConsumerOptions,
): ResolvedInMemoryConsumerOptions {
  options = knownKeysOption('', options, KEYS);
  if (!(options.broker instanceof InMemoryBroker)) {
    throw new FerryConfigError('broker', `must be an InMemoryBroker, got ${received(options.broker)}`);
  }
  const logger = loggerOption('logger', options.logger);
  return {
    broker: options.broker,
    queue: nonEmpty('queue', options.queue),
    consumer: nonEmpty('consumer', options.consumer),
    maxBatchSize: integer('maxBatchSize', options.maxBatchSize ?? 10, 1),
    maxTransportRetries: integer(
      'maxTransportRetries',
      options.maxTransportRetries ?? TRANSPORT_RETRIES.defaultMax,
      0,
    ),
    retryBackoff: resolveBackoff('retryBackoff', options.retryBackoff, DEFAULT_RETRY),
    reconnectBackoff: resolveBackoff('reconnectBackoff', options.reconnectBackoff, DEFAULT_RETRY),
    identity: functionOption('identity', options.identity),
    tenant: checkTenantSource(options.tenant),
    logger: logger === undefined ? undefined : guardLogger(logger),
    observer: functionOption('observer', options.observer),
    random: functionOption('random', options.random),
  };
}
