import type { ChannelModel, ConfirmChannel, Message } from 'amqplib';
import {
  FerryConfigError,
  abortableDelay,
  backoffDelay,
  integerOption as integer,
  nonEmptyOption as nonEmpty,
  resolveBackoff,
  type BackoffPolicy,
  type InboxAcceptor,
  type Logger,
} from '@ferry/core';
import { DeliveryBuffer, DeliverySettler } from './batch';
import { RabbitConnection, useConnection } from './connection';
import type { DecodeOptions, DeliveryExtractor } from './delivery';
import { DEFAULTS, type ConnectionOptions } from './options';
import { declareWorkQueue, workQueueNames, type WorkQueueNames, type WorkQueueTopology } from './topology';

export interface RabbitConsumerOptions extends WorkQueueTopology {
  /** A shared RabbitConnection, or options / a URL for a connection this consumer owns. */
  connection: RabbitConnection | ConnectionOptions | string;
  /** The inbox consumer (handler) name deliveries are accepted for. Required. */
  consumer: string;
  /** Unacknowledged deliveries the broker may push. Default 50. */
  prefetch?: number;
  /** Most deliveries per acceptMany call. Default: prefetch. */
  maxBatchSize?: number;
  /** Identity for messages without ferry's header or an AMQP messageId. */
  identity?: DeliveryExtractor;
  /** Tenant for messages without ferry's tenant header; default: none (global). */
  tenant?: DeliveryExtractor;
  /** Bodies above this are dead-lettered. Default: the acceptor's maxPayloadBytes. */
  maxPayloadBytes?: number;
  /** Accepted content types (parameters ignored). Default ['application/json']. */
  contentTypes?: readonly string[];
  /** Treat a delivery without content type as JSON. Default true. */
  acceptMissingContentType?: boolean;
  /** Trips through the retry queue before a delivery whose acceptance keeps failing is dead-lettered. Default 5. */
  maxTransportRetries?: number;
  /** Delay of each trip through the retry queue. Default 1 s doubling to 60 s, no jitter. */
  retryBackoff?: Partial<BackoffPolicy>;
  /** Declare the work queue, retry and dead-letter topology on every (re)connect. Default true. */
  declareTopology?: boolean;
  /** Deadline for the broker to confirm a copy sent to the retry or dead-letter exchange. Default 10000. */
  confirmTimeoutMs?: number;
  logger?: Logger;
  /** Random source for retry jitter. */
  random?: () => number;
}

export interface RabbitConsumer {
  readonly names: WorkQueueNames;
  /** Resolves once the consumer is attached for the first time. */
  ready(): Promise<void>;
  /** Stops consuming, lets the batch in flight finish (and be acked), closes. Safe twice. */
  close(): Promise<void>;
}

/**
 * Attaches an inbox to a RabbitMQ work queue with manual acks. A delivery is acked only after
 * the inbox committed its acceptance (or reported it a duplicate). Invalid deliveries and those
 * that exhausted their transport retries are copied to the dead-letter exchange with
 * `x-ferry-reject-reason`, then acked; deliveries whose acceptance failed are copied to the
 * retry exchange with a per-message TTL, then acked. A copy is acked away only after the
 * broker confirmed it; if it is not confirmed the delivery is rejected to the queue's own
 * dead-letter exchange (invalid) or left unacked and requeued after the backoff (retry).
 */
export function attachRabbitConsumer(inbox: InboxAcceptor, options: RabbitConsumerOptions): RabbitConsumer {
  const consumer = new ConsumerRuntime(inbox, options);
  consumer.start();
  return consumer;
}

class ConsumerRuntime implements RabbitConsumer {
  readonly names: WorkQueueNames;
  private readonly connection: RabbitConnection;
  private readonly ownsConnection: boolean;
  private readonly logger: Logger;
  private readonly prefetch: number;
  private readonly retryBackoff: BackoffPolicy;
  private readonly closing = new AbortController();
  private readonly buffer: DeliveryBuffer;
  private channel: ConfirmChannel | null = null;
  private consumerTag: string | null = null;
  private attaching: ChannelModel | null = null;
  private unsubscribe: (() => void) | null = null;
  private closePromise: Promise<void> | null = null;
  private readonly readyPromise: Promise<void>;
  private markReady: () => void = () => undefined;

  constructor(
    inbox: InboxAcceptor,
    private readonly options: RabbitConsumerOptions,
  ) {
    this.names = workQueueNames(options);
    const { connection, owned } = useConnection(options.connection);
    this.connection = connection;
    this.ownsConnection = owned;
    this.logger = options.logger ?? connection.options.logger;
    this.prefetch = integer('prefetch', options.prefetch ?? DEFAULTS.prefetch, 1, 65_535);
    const maxBatchSize = integer('maxBatchSize', options.maxBatchSize ?? this.prefetch, 1);
    const maxTransportRetries = integer(
      'maxTransportRetries',
      options.maxTransportRetries ?? DEFAULTS.maxTransportRetries,
      0,
    );
    this.retryBackoff = resolveBackoff('retryBackoff', options.retryBackoff, DEFAULTS.retryBackoff);
    const confirmTimeoutMs = integer(
      'confirmTimeoutMs',
      options.confirmTimeoutMs ?? DEFAULTS.confirmTimeoutMs,
      1,
    );
    const contentTypes = options.contentTypes ?? DEFAULTS.contentTypes;
    if (contentTypes.length === 0) throw new FerryConfigError('contentTypes', 'must name at least one type');
    const decode: DecodeOptions = {
      consumer: nonEmpty('consumer', options.consumer),
      maxPayloadBytes: integer('maxPayloadBytes', options.maxPayloadBytes ?? inbox.maxPayloadBytes, 1),
      contentTypes: contentTypes.map((t) => t.toLowerCase()),
      acceptMissingContentType: options.acceptMissingContentType ?? DEFAULTS.acceptMissingContentType,
      ...(options.identity ? { identity: options.identity } : {}),
      ...(options.tenant ? { tenant: options.tenant } : {}),
    };
    const settler = new DeliverySettler({
      inbox,
      names: this.names,
      decode,
      maxTransportRetries,
      retryBackoff: this.retryBackoff,
      random: options.random,
      confirmTimeoutMs,
      closing: this.closing.signal,
      logger: this.logger,
    });
    this.buffer = new DeliveryBuffer(maxBatchSize, (batch) => settler.settle(batch));
    this.readyPromise = new Promise((resolve) => {
      this.markReady = resolve;
    });
  }

  start(): void {
    this.unsubscribe = this.connection.onConnected((model) => this.attach(model));
    this.connection.connect().catch(() => undefined);
  }

  ready(): Promise<void> {
    return Promise.race([
      this.readyPromise,
      new Promise<never>((_, reject) => {
        if (this.closing.signal.aborted) reject(this.closing.signal.reason);
        this.closing.signal.addEventListener('abort', () => reject(this.closing.signal.reason), {
          once: true,
        });
      }),
    ]);
  }

  close(): Promise<void> {
    if (!this.closePromise) this.closePromise = this.shutdown();
    return this.closePromise;
  }

  private async shutdown(): Promise<void> {
    this.closing.abort(new Error('consumer closed'));
    this.unsubscribe?.();
    const channel = this.channel;
    if (channel && this.consumerTag !== null) await channel.cancel(this.consumerTag).catch(() => undefined);
    await this.buffer.drained().catch(() => undefined);
    this.channel = null;
    if (channel) await channel.close().catch(() => undefined);
    if (this.ownsConnection) await this.connection.close();
  }

  /** Opens a channel on `model`, declares the topology and consumes; retries with backoff while `model` lives. */
  private async attach(model: ChannelModel): Promise<void> {
    if (this.attaching === model) return;
    this.attaching = model;
    try {
      for (let failures = 0; !this.closing.signal.aborted && this.connection.current === model;) {
        try {
          await this.openChannel(model);
          return;
        } catch (error) {
          failures += 1;
          const delay = backoffDelay(
            failures,
            this.connection.options.reconnect,
            this.connection.options.random,
          );
          this.logger.warn(
            { err: error, delay, queue: this.names.queue },
            'ferry.rabbitmq: attach failed; retrying',
          );
          await abortableDelay(delay, this.closing.signal).catch(() => undefined);
        }
      }
    } finally {
      if (this.attaching === model) this.attaching = null;
    }
  }

  private async openChannel(model: ChannelModel): Promise<void> {
    const channel = await model.createConfirmChannel();
    channel.on('error', (error: unknown) => {
      this.logger.warn({ err: error, queue: this.names.queue }, 'ferry.rabbitmq: consumer channel error');
    });
    try {
      if (this.options.declareTopology ?? DEFAULTS.declareTopology) {
        await declareWorkQueue(channel, { ...this.options, maxRetryDelayMs: this.retryBackoff.maxMs });
      }
      await channel.prefetch(this.prefetch);
      if (this.closing.signal.aborted) throw new Error('consumer closed');
      channel.once('close', () => this.onChannelClosed(channel, model));
      this.channel = channel;
      const { consumerTag } = await channel.consume(
        this.names.queue,
        (message) => this.onMessage(channel, message),
        {
          noAck: false,
        },
      );
      this.consumerTag = consumerTag;
    } catch (error) {
      await channel.close().catch(() => undefined);
      throw error;
    }
    this.markReady();
  }

  private onChannelClosed(channel: ConfirmChannel, model: ChannelModel): void {
    if (this.channel !== channel) return;
    this.channel = null;
    this.consumerTag = null;
    this.buffer.dropChannel(channel);
    if (this.closing.signal.aborted) return;
    this.logger.warn({ queue: this.names.queue }, 'ferry.rabbitmq: consumer channel closed; re-attaching');
    if (this.connection.current === model) void this.attach(model);
  }

  private onMessage(channel: ConfirmChannel, message: Message | null): void {
    if (message === null) {
      // The broker cancelled the consumer (queue deleted): re-attach re-declares it.
      if (this.channel === channel) void channel.close().catch(() => undefined);
      return;
    }
    this.buffer.push({ message, channel });
  }
}
