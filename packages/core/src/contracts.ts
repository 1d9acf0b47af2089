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
  | { readonly id: string; readonly status: 'permanent'; readonly error: string }
  /**
   * The broker could not be reached (connection refused or closed, broker not available,
   * connection-level timeout): not a verdict on the message. The relay releases it without
   * spending an attempt, and a cycle of only `unavailable` outcomes opens its circuit.
   */
  | { readonly id: string; readonly status: 'unavailable'; readonly error: string };

/**
 * Publishes a batch and reports one outcome per message. A message may be reported
 * `sent` only after the broker confirmed it; a message without an outcome counts as
 * retryable. `signal` aborts when the relay lost its lease or is shutting down. The running
 * relay pipelines its batches (`pipelineDepth`), so `publish` may be called again before an
 * earlier call resolved; batches in flight never share a message or an ordering key.
 */
export interface Publisher {
  /**
   * The messaging system it publishes to, as OpenTelemetry's `messaging.system` names it
   * (`rabbitmq`, `kafka`, `aws_sqs`): an attribute of the relay's publish spans.
   */
  readonly system?: string;
  /**
   * Where `message` goes, as few names as the broker's topology has: the exchange, topic or
   * queue it resolves to (never a per-message routing key), null when it has no route. The relay
   * names the message's publish span after it (`publish <name>`); without it the span is
   * `publish` (an event's `destination` can be per message). ferry's publishers report the same
   * name as their events' `destination`. Called synchronously: a promise (or a throw) is no name.
   */
  destinationName?(message: OutboxMessage): string | null;
  /**
   * The longest a `publish()` call takes to answer by the publisher's own deadlines (a broker
   * that never answers: its confirm deadline, and what it waits for before it), in milliseconds.
   * The relay gives up on a publish itself (its outcome `retryable`, an attempt spent) only past
   * this plus a second, and past the application's `publishTimeout` (unset: one `lease.duration`)
   * when that is longer, so that a broker gone silent is judged by the publisher (`unavailable`,
   * no attempt spent) first.
   * ferry's publishers report it; without it (or not a positive finite number) the relay waits
   * `publishTimeout`, or, unset, as long as the publish takes while its lease renews (close() or
   * a lost lease end the wait).
   */
  readonly answerWithinMs?: number;
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
  /**
   * The messaging system that delivered it, as OpenTelemetry's `messaging.system` names it
   * (`rabbitmq`, `kafka`, `aws_sqs`). Every ferry transport fills it; stored on the receipt and
   * set on the `accept` and `process` spans. Omit it for a message that came some other way.
   */
  readonly system?: string | null;
}

export type InboxAcceptResult =
  | { readonly kind: 'accepted'; readonly id: string }
  | { readonly kind: 'duplicate'; readonly id: string }
  /** Same identity, different payload fingerprint: reported, never merged. */
  | { readonly kind: 'conflict'; readonly id: string; readonly reason: string }
  /**
   * Rejected before storage (too large, global not allowed, invalid text, too deep …); never
   * retried. `rejectReason` (set by core's Inbox) is the stable reason a transport writes as
   * its reject reason (`TRANSPORT_REJECT_REASONS`: invalid_text, headers_too_large,
   * payload_too_deep, payload_too_large, inbox_invalid).
   */
  | {
      readonly kind: 'invalid';
      readonly reason: string;
      readonly code: string;
      readonly rejectReason?: string;
    };

/**
 * Per item of a batch refused at the admission limit (`maxPendingMessages`): the results of
 * the items that were answered anyway (duplicates, conflicts, invalid input) and `refused`
 * for each new item, which was not stored and must not be acknowledged. Carried by the
 * error acceptMany throws (`InboxAdmissionRejectedError.results`), never returned.
 */
export type InboxAdmissionResult =
  | InboxAcceptResult
  | { readonly kind: 'refused'; readonly code: 'FERRY_ADMISSION_REJECTED'; readonly reason: string };

/**
 * What a transport calls. `acceptMany` returns one result per input, in order, once all
 * accepted rows are committed; it throws (a retriable FerryError) when acceptance as a
 * whole failed (database down, pool exhausted) or the admission limit refused a new item:
 * the transport then must not acknowledge the refused items, and need not acknowledge any.
 * At the admission limit the error (code FERRY_ADMISSION_REJECTED) carries `results`, one
 * InboxAdmissionResult per input, so a transport may still acknowledge the duplicates.
 */
export interface InboxAcceptor {
  acceptMany(inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]>;
  readonly maxPayloadBytes: number;
  /** Throws FERRY_HANDLER_MISSING when no handler takes `consumer`; transports call it on attach. */
  assertHandles?(consumer: string): void;
}
