/**
 * The small interfaces transports implement or call. Core never imports a transport;
 * transports depend only on these.
 */

/** One outbox event as handed to a publisher. */
export interface OutboxMessage {
  /** ferry's event id (uuid); travels as the message id header so consumers deduplicate. */
  readonly id: string;
  readonly type: string;
  readonly payload: Readonly<Record<string, unknown>>;
  /** Where to publish (exchange / topic / queue, transport-specific), if the event named one. */
  readonly destination: string | null;
  readonly orderingKey: string | null;
  readonly tenantId: string | null;
  readonly correlationId: string | null;
  readonly causationId: string | null;
  readonly headers: Readonly<Record<string, string>>;
  /** W3C trace context. */
  readonly traceparent: string | null;
  readonly tracestate: string | null;
  /** 1 for the first delivery attempt. */
  readonly attempt: number;
  readonly createdAt: Date;
}

export type PublishOutcome =
  | { readonly id: string; readonly status: 'sent' }
  | { readonly id: string; readonly status: 'retryable'; readonly error: string }
  | { readonly id: string; readonly status: 'permanent'; readonly error: string };

/**
 * Publishes a batch and reports one outcome per message. A message may be reported
 * `sent` only after the broker confirmed it; a message without an outcome counts as
 * retryable. `signal` aborts when the relay lost its lease or is shutting down.
 */
export interface Publisher {
  publish(messages: readonly OutboxMessage[], signal: AbortSignal): Promise<readonly PublishOutcome[]>;
  close?(): Promise<void>;
}

/** ferry's header / attribute names on the wire. */
export const FERRY_HEADERS = {
  messageId: 'x-ferry-message-id',
  eventType: 'x-ferry-event-type',
  tenantId: 'x-ferry-tenant-id',
  correlationId: 'x-ferry-correlation-id',
  causationId: 'x-ferry-causation-id',
  traceparent: 'traceparent',
  tracestate: 'tracestate',
  rejectReason: 'x-ferry-reject-reason',
  transportAttempts: 'x-ferry-transport-attempts',
} as const;

/** A broker delivery offered to the inbox. */
export interface InboxAcceptInput {
  /** The handler (consumer) name that will process it. */
  readonly consumer: string;
  readonly messageId: string;
  /** Tenant scope; null for a global message (rejected unless `global: 'shared'`). */
  readonly tenantId: string | null;
  readonly payload: Readonly<Record<string, unknown>>;
  readonly headers?: Readonly<Record<string, string>>;
  /** Message type, if the producer sent one. */
  readonly type?: string | null;
}

export type InboxAcceptResult =
  | { readonly kind: 'accepted'; readonly id: string }
  | { readonly kind: 'duplicate'; readonly id: string }
  /** Same identity, different payload fingerprint: reported, never merged. */
  | { readonly kind: 'conflict'; readonly id: string; readonly reason: string }
  /** Rejected before storage (too large, global not allowed, invalid); never retried. */
  | { readonly kind: 'invalid'; readonly reason: string; readonly code: string };

/**
 * What a transport calls. `acceptMany` returns one result per input, in order, once all
 * accepted rows are committed; it throws (a retriable FerryError) when acceptance as a
 * whole failed (database down, pool exhausted, admission limit): the transport then must
 * not acknowledge any of the batch.
 */
export interface InboxAcceptor {
  acceptMany(inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]>;
  readonly maxPayloadBytes: number;
}
