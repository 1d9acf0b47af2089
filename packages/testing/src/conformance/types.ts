import type { InboxAcceptor, Publisher } from '@ferry/core';
import type {
  TransportConsumerEvent,
  TransportObserver,
  TransportPublisherEvent,
} from '@ferry/core/transport';

/**
 * A feature the transport has (`true`), or lacks, with the reason. A lacking feature's cases
 * are still registered, as visible passing cases titled
 * `skipped: <feature> not supported by <transport>: <reason>`, which the summary line counts
 * as skipped; nothing is left out silently.
 */
export type FeatureSupport = true | { readonly unsupported: string };

/** What a broker can do; each case of the suite names the feature it needs. */
export interface ConformanceFeatures {
  /** Invalid deliveries can be read back from a dead-letter destination, with a reason. */
  readonly deadLetter: FeatureSupport;
  /** Messages that share an ordering key reach the inbox in publish order. */
  readonly orderingPerKey: FeatureSupport;
  /** `restartBroker` is given, and deliveries not acked before it come back after it. */
  readonly redeliveryAfterRestart: FeatureSupport;
  /** The publisher reports a message to `unroutableDestination` as not sent. */
  readonly unroutableDetection: FeatureSupport;
  /**
   * `heldCount` is given: the broker can say how many messages of the source it still holds for
   * the consumer (not settled), so the suite can check that what was accepted was also settled.
   */
  readonly heldCount: FeatureSupport;
}

/** A message injected past the publisher: other producers' messages, invalid bodies. */
export interface RawMessage {
  readonly body: Buffer | string;
  /** The transport's native message id (AMQP messageId, Kafka header, SQS attribute). */
  readonly messageId?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Default application/json. */
  readonly contentType?: string;
}

export interface DeadLetter {
  readonly messageId: string | null;
  /** The reason the transport recorded (ferry's `x-ferry-reject-reason`), if any. */
  readonly reason: string | null;
}

/** What every transport's attach function returns. */
export interface AttachedConsumer {
  /** Resolves once consuming; rejects with FERRY_CLOSED after close(). */
  ready(): Promise<void>;
  /**
   * The readiness probe: resolves while the consumer is attached (consuming), rejects while it is
   * not (ConsumerDisconnectedError, `FERRY_TRANSPORT_ERROR`) and with FERRY_CLOSED after close().
   */
  check(): Promise<void>;
  /**
   * Stops consuming and waits for the batch in flight (its acceptance answered and settled, or
   * given up and handed back); deliveries not yet accepted stay with the broker. Safe to call
   * twice; concurrent calls return the same promise.
   */
  close(): Promise<void>;
}

/** What the suite hands createTransport. */
export interface TransportContext {
  /** The publisher's `observer` option: the suite checks its `published` events. */
  readonly publisherObserver: TransportObserver<TransportPublisherEvent>;
}

/** What the suite hands attach. */
export interface AttachContext {
  /** The inbox consumer name. */
  readonly consumer: string;
  /** The consumer's `observer` option: the suite checks the events against the contract. */
  readonly observer: TransportObserver<TransportConsumerEvent>;
}

/** One isolated instance of a transport (its own queue / topic), made fresh for every case. */
export interface TransportUnderTest {
  /** close() is required: the suite checks it is safe twice and what publish does after it. */
  readonly publisher: Publisher & { close(): Promise<void> };
  /** `OutboxMessage.destination` that reaches the consumer attached by `attach`. */
  readonly destination: string | null;
  /** The `source` of the consumer's events: the queue / topic it reads, as the transport names it. */
  readonly source: string;
  /** A destination that routes nowhere; required when `features.unroutableDetection`. */
  readonly unroutableDestination?: string;
  /**
   * Attaches a consumer that feeds `acceptor`, passing the context's options; resolves once it
   * consumes. It reads what the source holds that no earlier consumer of the case settled, messages
   * published before it was attached included (Kafka: every attach of a case joins one consumer
   * group, which starts at the earliest offset).
   */
  attach(acceptor: InboxAcceptor, context: AttachContext): Promise<AttachedConsumer>;
  publishRaw(message: RawMessage): Promise<void>;
  /** Every dead letter seen so far (cumulative across calls). */
  readDeadLetters(): Promise<readonly DeadLetter[]>;
  /**
   * Required when `features.heldCount`. How many messages the broker still holds on `source` for
   * the consumers `attach` makes, asked while none is attached: messages not delivered yet, or
   * delivered and never settled (acked, committed, deleted), retry copies included. RabbitMQ: the
   * messages in the queue and its retry queues; Kafka: the consumer group's lag; SQS: visible,
   * in-flight and delayed messages. Dead-lettered messages are settled.
   */
  heldCount?(): Promise<number>;
  /** Closes what the transport opened and deletes its queues / topics. */
  cleanup(): Promise<void>;
}

export interface TransportConformanceOptions {
  /** Shown in the describe block, e.g. 'rabbitmq'. */
  readonly name: string;
  /** The `transport` of its observer events ('rabbitmq', 'kafka', 'sqs', 'memory', …). */
  readonly transport: string;
  /**
   * OpenTelemetry's `messaging.system` of the broker (`rabbitmq`, `kafka`, `aws_sqs`): the
   * consumer must name it as `system` on every delivery it offers the inbox.
   */
  readonly system: string;
  readonly features: ConformanceFeatures;
  /** One fresh instance per case; its publisher takes `context.publisherObserver` as its observer. */
  createTransport(context: TransportContext): Promise<TransportUnderTest>;
  /** Breaks the transport's broker connections (restart, or a broker-side close). */
  restartBroker?(): Promise<void>;
  /**
   * Deadline for every wait in the suite. Default 30000 ms, at most 715,827,882. Three times it is
   * jest's timeout of each case and each beforeEach / afterEach.
   */
  readonly timeoutMs?: number;
}
