import type { InboxAcceptor, Publisher } from '@ferry/core';

/**
 * What a broker can do. A case that needs an absent feature is not registered at all (no
 * it.skip); the case list below says which feature each case needs.
 */
export interface ConformanceFeatures {
  /** Invalid deliveries can be read back from a dead-letter destination, with a reason. */
  readonly deadLetter: boolean;
  /** Messages that share an ordering key reach the inbox in publish order. */
  readonly orderingPerKey: boolean;
  /** `restartBroker` is given, and deliveries not acked before it come back after it. */
  readonly redeliveryAfterRestart: boolean;
  /** The publisher reports a message to `unroutableDestination` as not sent. */
  readonly unroutableDetection: boolean;
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

export interface AttachedConsumer {
  close(): Promise<void>;
}

/** One isolated instance of a transport (its own queue / topic), made fresh for every case. */
export interface TransportUnderTest {
  readonly publisher: Publisher;
  /** `OutboxMessage.destination` that reaches the consumer attached by `attach`. */
  readonly destination: string | null;
  /** A destination that routes nowhere; required when `features.unroutableDetection`. */
  readonly unroutableDestination?: string;
  /** Attaches a consumer that feeds `acceptor`; resolves once it consumes. */
  attach(acceptor: InboxAcceptor, options: { consumer: string }): Promise<AttachedConsumer>;
  publishRaw(message: RawMessage): Promise<void>;
  /** Every dead letter seen so far (cumulative across calls). */
  readDeadLetters(): Promise<readonly DeadLetter[]>;
  /** Closes what the transport opened and deletes its queues / topics. */
  cleanup(): Promise<void>;
}

export interface TransportConformanceOptions {
  /** Shown in the describe block, e.g. 'rabbitmq'. */
  readonly name: string;
  readonly features: ConformanceFeatures;
  createTransport(): Promise<TransportUnderTest>;
  /** Breaks the transport's broker connections (restart, or a broker-side close). */
  restartBroker?(): Promise<void>;
  /** Deadline for every wait in the suite. Default 30000 ms. */
  readonly timeoutMs?: number;
}
