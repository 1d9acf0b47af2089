import { clearTimeout, realDelay, setTimeout } from './realTimers';

/** Every CallUnsettled made: told apart by identity, never by reading the value (see `is`). */
const made = new WeakSet<object>();

/** A call `WaitDeadline.race` gave up on: the deadline came before it settled. */
export class CallUnsettled extends Error {
  constructor(readonly timeoutMs: number) {
    super(`the call had not settled after ${timeoutMs} ms`);
    this.name = 'CallUnsettled';
    made.add(this);
  }

  /**
   * Whether `error` (what a raced call rejected with) is the deadline's CallUnsettled. Not
   * `instanceof`, which reads the prototype of whatever the call threw: a revoked Proxy throws
   * there, and the wait rejected with that TypeError instead of its timeout (review 136).
   */
  static is(error: unknown): error is CallUnsettled {
    return (typeof error === 'object' || typeof error === 'function') && error !== null && made.has(error);
  }
}

/**
 * The deadline of one wait of the test helpers (waitUntil, drainInbox, waitForInboxRecord), on
 * real time (realTimers: jest's fake timers neither hold nor hurry it): every call the wait makes
 * is raced against it, so a call that never settles (a probe, a database call) cannot hold the
 * wait past its timeout. `end()` (in a
 * `finally`) clears the timer; a call given up on is left to itself, nothing of the wait on it.
 */
export class WaitDeadline {
  private readonly deadline = new AbortController();
  private readonly signal = this.deadline.signal;
  private readonly timer: ReturnType<typeof setTimeout>;
  private ended = false;

  constructor(readonly timeoutMs: number) {
    this.timer = setTimeout(() => this.deadline.abort(), timeoutMs);
    this.timer.unref();
  }

  /** True once the deadline has passed. */
  get expired(): boolean {
    return this.signal.aborted && !this.ended;
  }

  /** Settles as `call()` does, or rejects with CallUnsettled when the deadline comes first. */
  race<T>(call: () => T | Promise<T>): Promise<T> {
    const unsettled = new CallUnsettled(this.timeoutMs);
    if (this.signal.aborted) return Promise.reject(unsettled);
    let onDeadline = (): void => undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      onDeadline = () => reject(unsettled);
      this.signal.addEventListener('abort', onDeadline, { once: true });
    });
    // Promise.race handles both: a call that rejects after the deadline is no unhandled rejection.
    return Promise.race([Promise.resolve().then(call), deadline]).finally(() =>
      this.signal.removeEventListener('abort', onDeadline),
    );
  }

  /** Waits `ms`, or until the deadline if that comes first. */
  async pause(ms: number): Promise<void> {
    await realDelay(ms, this.signal);
  }

  /** The wait is over: the deadline's timer is cleared. */
  end(): void {
    this.ended = true;
    clearTimeout(this.timer);
  }
}
