import type { Logger } from '../observe/logger';
import { clientEnded } from './dbErrors';

/**
 * The lifecycle of a poll loop (the outbox relay's, the inbox worker's): 'idle' until started,
 * 'running', 'stopped' when the loop ended on its own because the database client it runs on was
 * ended (EndedClientStop), 'closing' and 'closed' from close(). close() closes a stopped loop as
 * any other; start() starts it again.
 */
export type LoopState = 'idle' | 'running' | 'stopped' | 'closing' | 'closed';

/** A stop reason is shown in logs and liveness: at most this many characters. */
const MAX_STOP_REASON_CHARS = 500;

/**
 * The one home of a poll loop's stop on a database client the application ended (`pool.end()`
 * before the relay or inbox was closed, a Kysely destroyed): every statement on it fails with
 * FERRY_CLOSED (fromPg's openTarget, dbErrors.ts; clientEnded reads the driver's own error for it
 * too), and no statement will ever succeed on it again. Polling on, a loop reported the same error
 * at every back-off for ever while its state said running (the inbox worker until review 87, the
 * relay until review 88). The loop asks `stops(error)` with each failure of its own statements
 * while it runs (the inbox worker also with a handler transaction's that never began: the
 * application's pool, review 105): true for FERRY_CLOSED,
 * the reason recorded and one error logged; the loop then ends and says 'stopped'. Any other
 * failure (FERRY_DATABASE_UNAVAILABLE, FERRY_TIMEOUT: a database that comes back) is false: the
 * loop backs off and polls again.
 */
export class EndedClientStop {
  private stopReason: string | null = null;

  /**
   * `loop` names the loop in its log line ('ferry outbox relay'), `owner` what the application
   * closes before ending its pool ('relay').
   */
  constructor(
    private readonly logger: Logger,
    private readonly loop: string,
    private readonly owner: string,
  ) {}

  /** Why the loop stopped (the last stops() that returned true since start()), else null. */
  get reason(): string | null {
    return this.stopReason;
  }

  /** Whether `error` (a failure of the loop's own statement) ends the loop: see the class. */
  stops(error: unknown): boolean {
    if (!clientEnded(error)) return false;
    const message = error instanceof Error ? error.message : String(error);
    this.stopReason = `its database client was ended (FERRY_CLOSED): ${message}`.slice(
      0,
      MAX_STOP_REASON_CHARS,
    );
    this.logger.error(
      { code: 'FERRY_CLOSED', reason: this.stopReason },
      `${this.loop} stopped: the pool or client it runs on was ended, no claim can succeed on it again; close the ${this.owner} before ending its pool`,
    );
    return true;
  }

  /** The loop starts (again): no reason until it stops again. */
  clear(): void {
    this.stopReason = null;
  }
}
