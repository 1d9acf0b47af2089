/** Why a row went FAILED. */
export type FailReason = 'permanent' | 'attempts_exhausted' | 'poison_guard';

/**
 * What the outbox tells its observer, one `{ type, … }` event at a time (the same shape as the
 * inbox's and every transport's events). Bounded: ids and event types, never payloads.
 * Called through safeEmit: a throwing or rejecting observer is logged and ignored.
 */
export type OutboxEvent =
  /**
   * emit/emitMany inserted the rows. Not a commit signal when you pass your transaction: then it
   * runs inside it (`committed: false`). When emitMany ran its own transaction, it runs after
   * that commit (`committed: true`).
   */
  | {
      readonly type: 'inserted';
      readonly ids: readonly string[];
      readonly types: readonly string[];
      readonly committed: boolean;
    }
  /** A relay cycle claimed a batch. */
  | {
      readonly type: 'claimed';
      readonly claimToken: string;
      readonly ids: readonly string[];
      readonly types: readonly string[];
    }
  /**
   * The broker confirmed; the row is SENT. `ageMs`: from the row's creation to its completion,
   * both on the database clock (emit to confirm, the latency a histogram wants).
   */
  | {
      readonly type: 'sent';
      readonly id: string;
      readonly eventType: string;
      readonly attempt: number;
      readonly ageMs: number;
    }
  | {
      readonly type: 'retry-scheduled';
      readonly id: string;
      readonly eventType: string;
      readonly attempt: number;
      readonly error: string;
      readonly nextAttemptAt: Date;
    }
  | {
      readonly type: 'failed';
      readonly id: string;
      readonly eventType: string;
      readonly attempt: number;
      readonly error: string;
      readonly reason: FailReason;
    }
  /** The batch's lease was lost (heartbeat said so, or completion found the rows taken): outcomes discarded. */
  | {
      readonly type: 'lease-lost';
      readonly claimToken: string;
      readonly ids: readonly string[];
      readonly reason: string;
    }
  /** Expired leases were requeued (or failed by the poison guard). */
  | { readonly type: 'recovered'; readonly requeued: number; readonly poisoned: readonly string[] }
  /** A later event of a key was claimed past a FAILED head (ordering.failedHead = 'skip'). */
  | { readonly type: 'ordering-skipped'; readonly skippedIds: readonly string[] }
  /**
   * Every outcome of `failures` cycles was `unavailable`: claiming pauses for `openMs`.
   * `reopened`: a failed half-open probe opened the circuit again (no circuit-closed came
   * between); false when a closed circuit opened.
   */
  | {
      readonly type: 'circuit-opened';
      readonly failures: number;
      readonly openMs: number;
      readonly error: string;
      readonly reopened: boolean;
    }
  /**
   * A (probe) cycle reached the broker again; claiming resumes. `relayClosed`: instead, the
   * relay was closed (or stopped on an ended client) while its circuit was open (the broker was
   * not reached; the circuit ends with the relay).
   */
  | { readonly type: 'circuit-closed'; readonly openedForMs: number; readonly relayClosed: boolean }
  /**
   * One relay cycle ended (also an empty one, and one that claimed nothing because the circuit
   * is open). Counts are rows, and account for every claimed one: `lost` rows had their claim
   * taken, `unavailable` rows were handed back unpublished (the broker was unreachable; no
   * attempt spent), `released` rows were handed back because the relay was closing. A cycle that
   * failed reports `infrastructure-error` instead.
   */
  | {
      readonly type: 'cycle';
      readonly claimed: number;
      readonly sent: number;
      readonly retried: number;
      readonly failed: number;
      readonly lost: number;
      readonly unavailable: number;
      readonly released: number;
      readonly durationMs: number;
    }
  /**
   * A database call failed and the relay caught it: the running loop backs off and goes on; a
   * failed lease renewal counts towards lease.heartbeatFailureTolerance. `operation`: 'claim',
   * 'complete', 'release claims', 'release abandoned claims', 'recover leases', 'renew lease', or
   * 'cycle' for an error that names none ('end backend' is logged, not reported: abandonedClaims.ts). `error`: one redacted line, at most 500 characters. What runOnce() throws to its
   * caller is not reported here.
   */
  | { readonly type: 'infrastructure-error'; readonly operation: string; readonly error: string };

/** The outbox's observer (relay config, emit options): one function of every OutboxEvent. */
export type OutboxObserver = (event: OutboxEvent) => unknown;
