import type { PrismaTransactionLike } from '../sql/executor';

export const INBOX_STATUSES = ['PENDING', 'PROCESSING', 'RETRYABLE', 'COMPLETED', 'DEAD'] as const;
export type InboxStatus = (typeof INBOX_STATUSES)[number];

/** Replay lineage of a receipt created by admin replay(). */
export interface InboxReplayLineage {
  readonly sourceId: string;
  readonly sourceVersion: number;
  readonly requestId: string;
  readonly actor: string;
  readonly reason: string;
  readonly requestedAt: Date;
}

export interface InboxRequeueEntry {
  readonly at: string;
  readonly actor: string;
  readonly reason: string;
  readonly fromVersion: number;
  readonly attemptsInCycle: number;
  readonly lastError: string | null;
  /** This requeue's number among the receipt's requeues, from 1 (the history keeps the last 10). */
  readonly sequence: number;
}

/** One stored receipt, as returned by accept() and the admin API. */
export interface InboxRecord {
  readonly id: string;
  readonly tenantId: string | null;
  readonly consumer: string;
  readonly messageId: string;
  readonly messageType: string | null;
  /**
   * The messaging system that delivered it (OpenTelemetry's `messaging.system`: `rabbitmq`,
   * `kafka`, `aws_sqs`), as the transport named it; null when none was named.
   */
  readonly system: string | null;
  /** null after purgeCompletedPayload(). */
  readonly payload: Readonly<Record<string, unknown>> | null;
  readonly payloadFingerprint: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly status: InboxStatus;
  /** Claims in the current retry cycle (reset by requeue). */
  readonly attempts: number;
  readonly lifetimeAttempts: number;
  readonly maxAttempts: number;
  readonly nextAttemptAt: Date;
  /** The claim holding a PROCESSING receipt (what admin `release({ claimToken, force })` names). */
  readonly claimToken: string | null;
  readonly leaseExpiresAt: Date | null;
  readonly rowVersion: number;
  /** Redacted. */
  readonly lastError: string | null;
  /**
   * The operator requeues, oldest first: the last 10 are kept (INBOX_REQUEUE_HISTORY_LIMIT), each
   * numbered (`sequence`); `requeueHistoryDropped` older ones were dropped.
   */
  readonly requeueHistory: readonly InboxRequeueEntry[];
  /** Requeues no longer in `requeueHistory` (the oldest, beyond the last 10); 0 when none. */
  readonly requeueHistoryDropped: number;
  readonly replay: InboxReplayLineage | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly completedAt: Date | null;
  readonly deadAt: Date | null;
  readonly payloadPurgedAt: Date | null;
}

/** What acceptance needs to know of a stored receipt: its identity, id and payload fingerprint. */
export type ReceiptKey = Pick<
  InboxRecord,
  'id' | 'tenantId' | 'consumer' | 'messageId' | 'payloadFingerprint'
>;

/** A claimed receipt as the worker sees it (adds the claim token). */
export interface ClaimedReceipt extends InboxRecord {
  readonly claimToken: string;
}

/** What a handler receives beside the payload. */
export interface InboxHandlerContext<TTx = PrismaTransactionLike> {
  /**
   * The application's transaction, as its client made it (a Prisma transaction client, a pg
   * `PoolClient`, a Kysely `Transaction`: see TransactionAdapter); completion commits with it.
   */
  readonly tx: TTx;
  readonly receiptId: string;
  readonly messageId: string;
  readonly consumer: string;
  readonly tenantId: string | null;
  readonly messageType: string | null;
  /** 1 for the first claim of the current retry cycle. */
  readonly attempt: number;
  readonly lifetimeAttempts: number;
  readonly maxAttempts: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly replay: InboxReplayLineage | null;
  /** Aborted when the lease is lost or shutdown interrupts the handler. */
  readonly signal: AbortSignal;
}

export type InboxHandlerFunction<TTx = PrismaTransactionLike> = (
  payload: Readonly<Record<string, unknown>>,
  context: InboxHandlerContext<TTx>,
) => Promise<void>;

/**
 * A handler, either a function or an object with an optional `parse` that validates the
 * payload first (its answer, awaited when it is a promise, is what `handle` receives); `parse`
 * throwing or rejecting makes the receipt DEAD (invalid payload) unless it threw
 * InboxUnsupportedSchemaError (DEAD, unsupported schema).
 */
export type InboxHandler<TTx = PrismaTransactionLike> =
  | InboxHandlerFunction<TTx>
  | {
      readonly parse?: (payload: Readonly<Record<string, unknown>>) => unknown;
      readonly handle: (payload: never, context: InboxHandlerContext<TTx>) => Promise<void>;
    };

/** Wraps a handler call; must call and await `next()` exactly once. */
export type InboxHandlerContextWrapper<TTx = PrismaTransactionLike> = (
  context: InboxHandlerContext<TTx>,
  next: () => Promise<void>,
) => Promise<void>;

/** Observer events: bounded (no payloads, truncated strings) and redacted. */
export type InboxEvent =
  | { readonly type: 'accepted'; readonly receiptId: string; readonly consumer: string }
  | {
      readonly type: 'duplicate';
      readonly receiptId: string;
      readonly consumer: string;
      readonly conflict: boolean;
    }
  | {
      readonly type: 'completed';
      readonly receiptId: string;
      readonly consumer: string;
      readonly attempt: number;
      readonly durationMs: number;
      readonly reconciled: boolean;
    }
  | {
      readonly type: 'retry';
      readonly receiptId: string;
      readonly consumer: string;
      readonly attempt: number;
      readonly delayMs: number;
      readonly error: string;
    }
  | {
      readonly type: 'dead';
      readonly receiptId: string;
      readonly consumer: string;
      readonly attempt: number;
      readonly reason: 'permanent' | 'invalid_payload' | 'unsupported_schema' | 'exhausted';
      readonly error: string;
    }
  | {
      readonly type: 'lease-lost';
      readonly receiptId: string;
      readonly consumer: string;
      readonly attempt: number;
    }
  | { readonly type: 'infrastructure-error'; readonly operation: string; readonly error: string };

export type InboxObserver = (event: InboxEvent) => unknown;
