import type { Logger } from '../observe/logger';
import type { StatementOptions } from '../sql/executor';
import { answeredByServer } from '../sql/sqlState';
import type { RelayStore } from './store';

/** Tokens kept at most; past it the oldest is left to lease recovery (and logged). */
const MAX_KEPT = 1_000;

interface Dropped {
  /** Nothing can lease more rows to the token any more: one release after this settles it. */
  ended: boolean;
  /** The claim's rows reached the publisher: the claim counter keeps the claim. */
  readonly published: boolean;
  /** The backend of the claim's last statement (fromPg), ended while the statement may still run. */
  pid?: number;
  /** performance.now() when that statement was sent. */
  sentAt?: number;
  /** Settled on the next cycle (new, or its statement just ended); otherwise at lease recovery. */
  due: boolean;
}

/**
 * The claims the relay dropped while PostgreSQL may still hold rows under their tokens: a claim,
 * completion or release it gave up on (statementTimeout) or that failed. Their rows are handed
 * back on the next cycle, before lease recovery, without counting an attempt or an expired claim
 * (releaseAbandoned), so a statement given up on costs an event neither its retries, nor the poison
 * guard's count, nor a wait of a whole lease.
 *
 * A completion or release is fenced (claim token and lease): after one release clears the token,
 * nothing it does later changes a row. A claim is not: late, it leases rows to the token. So a
 * claim's token is kept until its statement is known to be over, and released again after that:
 * when PostgreSQL answered it late (StatementOptions.onAbandoned), or, on an executor that names
 * the statement's backend (fromPg), once that backend was ended (pg_terminate_backend) and is gone.
 * Until then the token is released at every lease recovery (every tenth cycle), far within a lease.
 */
export class AbandonedClaims {
  private readonly dropped = new Map<string, Dropped>();

  constructor(
    private readonly logger: Logger,
    /** How long ending a backend waits for it to exit (below the statement's own deadline). */
    private readonly endWaitMs: number,
  ) {}

  /** True when a claim is waiting to be handed back. */
  get pending(): boolean {
    return this.dropped.size > 0;
  }

  /**
   * StatementOptions for the statements of the claim under `token`, and what to call when the
   * claim fails (before the relay dropped it).
   */
  claiming(token: string): { statement: StatementOptions; failed: (error: unknown) => void } {
    let backend: { pid: number; sentAt: number } | undefined;
    let ended: Promise<boolean> | undefined;
    let entry: Dropped | undefined;
    const statement: StatementOptions = {
      // The backend of a statement given up on unanswered (fromPg); reported when it was given up.
      onBackend: (given) => {
        backend = given;
        if (entry) Object.assign(entry, given);
      },
      onAbandoned: (late) => void (ended = late),
    };
    const failed = (error: unknown): void => {
      // Given up on: over once the late answer says so. Failed: over if PostgreSQL answered.
      const dropped = this.add(token, {
        ended: ended === undefined && answeredByServer(error),
        published: false,
      });
      Object.assign(dropped, backend);
      entry = dropped;
      void ended?.then((over) => {
        if (!over) return;
        dropped.ended = true;
        dropped.due = true;
      });
    };
    return { statement, failed };
  }

  /** The relay dropped a claim whose statements are over (a completion or release failed after it). */
  drop(token: string, published: boolean): void {
    this.add(token, { ended: true, published });
  }

  private add(token: string, how: { ended: boolean; published: boolean }): Dropped {
    const entry: Dropped = { ...how, due: true };
    this.dropped.set(token, entry);
    const oldest = this.dropped.keys().next().value;
    if (this.dropped.size > MAX_KEPT && oldest !== undefined) {
      this.dropped.delete(oldest);
      this.logger.error(
        { claimToken: oldest },
        'too many claims given up on; the oldest is left to lease recovery',
      );
    }
    return entry;
  }

  /**
   * Hands back the rows of the claims due (every claim when `recovering`): ends the backend of a
   * claim that may still run first, where it is known. Returns the rows handed back; a claim
   * whose statement is over is forgotten once released.
   */
  async settle(store: RelayStore, recovering: boolean): Promise<number> {
    const due = [...this.dropped].filter(([, entry]) => entry.due || recovering);
    if (due.length === 0) return 0;
    for (const [token, entry] of due) {
      entry.due = false;
      if (!entry.ended && entry.pid !== undefined) entry.ended = await this.endBackend(store, token, entry);
    }
    // Which are over is read before the release is sent: a late answer arriving meanwhile is due again.
    const over = due.filter(([, entry]) => entry.ended).map(([token]) => token);
    const tokens = (published: boolean) =>
      due.filter(([, entry]) => entry.published === published).map(([token]) => token);
    const released = await store.releaseAbandoned(tokens(false), tokens(true));
    for (const token of over) this.dropped.delete(token);
    if (released > 0) {
      this.logger.warn(
        { claimTokens: due.map(([token]) => token), released },
        'handed back rows of claims the relay gave up on (no attempt or expired claim counted)',
      );
    }
    return released;
  }

  /** Ends the claim's backend; false (retried at lease recovery) when it cannot be ended yet. */
  private async endBackend(store: RelayStore, token: string, entry: Dropped): Promise<boolean> {
    const { pid, sentAt = performance.now() } = entry;
    if (pid === undefined) return false;
    try {
      return await store.endBackend(pid, performance.now() - sentAt, this.endWaitMs);
    } catch (error) {
      this.logger.warn(
        { err: error, claimToken: token, pid },
        'could not end the backend of a claim given up on; its rows are handed back at lease recovery',
      );
      return false;
    }
  }
}
