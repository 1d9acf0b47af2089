import type { AuditOptions } from '../audit/audited';
import type { OutboxRecord, OutboxStatus } from './record';
import type { AdminOutcome } from './sql/adminTransition';

export type { AdminOutcome, AuditOptions };
export interface AdminResult {
  readonly id: string;
  readonly outcome: AdminOutcome;
}

export interface OutboxStats {
  readonly pending: number;
  readonly processing: number;
  /**
   * Exact up to 10,000 (HISTORY_EXACT_LIMIT) SENT rows in the scope; beyond it PostgreSQL's
   * estimate (`sentEstimated`), so that stats never read the whole SENT history.
   */
  readonly sent: number;
  readonly sentEstimated: boolean;
  readonly failed: number;
  /** PROCESSING rows whose lease already expired (recovery will requeue them). */
  readonly expiredLeases: number;
  /** Age of the oldest PENDING row by the database clock; null when none is pending. */
  readonly oldestPendingAgeMs: number | null;
}

export interface HealthThresholds {
  /** Default 300,000 ms. */
  maxOldestPendingAgeMs?: number;
  /** Default 0: any FAILED row makes the outbox unhealthy. */
  maxFailed?: number;
  /** Default 0. */
  maxExpiredLeases?: number;
}

export interface OutboxHealth {
  readonly healthy: boolean;
  /** One line per threshold exceeded. */
  readonly problems: readonly string[];
  readonly stats: OutboxStats;
}

export interface ListQuery {
  status?: OutboxStatus;
  type?: string;
  /** Only events of this ordering key. */
  key?: string;
  /**
   * Only events created before this time (an age filter: `new Date(Date.now() - age)`). With a
   * `cursor`, give it again (recomputed from the age is fine): a later instant than the first
   * page's, which the cursor carries, is read as the same age measured later and the page is
   * listed with the first page's bound, so the listing does not shift; an earlier one is honoured.
   * A cursor of a listing without one is refused with one, and the other way round.
   */
  createdBefore?: Date;
  /** Default 50, at most 1,000. */
  limit?: number;
  /** The opaque `nextCursor` of the previous page. */
  cursor?: string;
  /** The payloads are read: the default. `false`: see ListSummaryQuery. */
  payload?: true;
}

/**
 * `list()` without the payloads: each item's `payload` is null, not read, for a listing that shows
 * or needs no payload (ferry's CLI text listing, `retry --all`): its memory then does not grow
 * with the payloads' size (up to `maxPayloadBytes` each, 16 MiB at most).
 */
export interface ListSummaryQuery extends Omit<ListQuery, 'payload'> {
  payload: false;
}

/** An event as `list({ payload: false })` answers it: every field, the payload left out (null). */
export type OutboxSummary = Omit<OutboxRecord, 'payload'> & { readonly payload: null };

/** A page of `list()`; `nextCursor` null on the last page. */
export interface OutboxPage<T> {
  items: T[];
  nextCursor: string | null;
}

export interface OutboxAdmin {
  /** FAILED -> PENDING; audited (actor, reason) in the same transaction; `dryRun` changes nothing. */
  retry(id: string, audit?: AuditOptions): Promise<AdminResult>;
  retryMany(ids: readonly string[], audit?: AuditOptions): Promise<AdminResult[]>;
  /** PENDING -> FAILED with last_error `reason` (also the audit reason). */
  markFailed(id: string, reason: string, audit?: Omit<AuditOptions, 'reason'>): Promise<AdminResult>;
  /**
   * Hands claims of a dead process back: PROCESSING rows whose lease expired, or with `force`
   * every row of `claimToken`, go to PENDING without spending a retry. At most `limit` rows.
   */
  release(args?: ReleaseArgs): Promise<ReleaseResult>;
  get(id: string): Promise<OutboxRecord | null>;
  list(query?: ListQuery): Promise<OutboxPage<OutboxRecord>>;
  list(query: ListSummaryQuery): Promise<OutboxPage<OutboxSummary>>;
  stats(): Promise<OutboxStats>;
  health(thresholds?: HealthThresholds): Promise<OutboxHealth>;
  /** Deletes at most `limit` (default 1,000, at most 10,000) SENT rows published before `before`. */
  purgeSent(args: PurgeSentArgs): Promise<{ deleted: number }>;
}

export interface OperatorOutboxAdmin extends OutboxAdmin {
  /** The same API, fixed to one tenant: other tenants' rows read as not_found / absent. */
  forTenant(tenantId: string): OutboxAdmin;
}

export interface ReleaseArgs extends AuditOptions {
  /** Only this claim token's rows; required with `force`. */
  readonly claimToken?: string;
  /**
   * Release the token's rows even though their lease has not expired (the process is dead). The
   * relay publishes outside any transaction, so nothing tells a live relay from a dead one: rows a
   * live relay is still publishing are published again after the release (duplicates).
   */
  readonly force?: boolean;
  /** Default 1,000, at most 10,000. */
  readonly limit?: number;
}

export interface ReleaseResult {
  /** Ids released (or, on a dry run, that would be). */
  readonly released: readonly string[];
}

export interface PurgeSentArgs extends AuditOptions {
  readonly before: Date;
  /** Default 1,000, at most 10,000. */
  readonly limit?: number;
}
