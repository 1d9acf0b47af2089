export type OutboxStatus = 'PENDING' | 'PROCESSING' | 'SENT' | 'FAILED';

/** An outbox row as the admin API and observers see it. */
export interface OutboxRecord {
  readonly id: string;
  readonly type: string;
  readonly payload: Readonly<Record<string, unknown>>;
  readonly status: OutboxStatus;
  readonly destination: string | null;
  readonly orderingKey: string | null;
  readonly tenantId: string | null;
  readonly correlationId: string | null;
  readonly causationId: string | null;
  readonly headers: Readonly<Record<string, string>>;
  readonly traceparent: string | null;
  readonly tracestate: string | null;
  /** Failed delivery attempts so far. */
  readonly retryCount: number;
  /** Delivery attempts allowed, stored at emit time. */
  readonly maxRetries: number;
  /** Lifetime claims (never reset; read by the poison guard). */
  readonly claimCount: number;
  /** When the row is next due (database clock). */
  readonly nextAttemptAt: Date;
  /** The claim holding a PROCESSING row (what `release({ claimToken, force })` names); null otherwise. */
  readonly claimToken: string | null;
  readonly leaseExpiresAt: Date | null;
  readonly lastError: string | null;
  readonly publishedAt: Date | null;
  readonly failedAt: Date | null;
  /** When a later event of the same ordering key was published past this FAILED one. */
  readonly skippedAt: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}
