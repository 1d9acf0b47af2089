export type WakeReason = 'notified' | 'timeout' | 'closed';

/**
 * Coalesces wake-ups: any number of notify() calls while the relay or inbox worker is busy leave one
 * pending wake-up, so a burst of notifications costs at most one extra poll.
 */
export class WakeSignal {
  private pending = false;
  private closed = false;
  private resolveWaiter: ((reason: WakeReason) => void) | undefined;
  /** The waiter is a pause(): a notification stays pending instead of ending it. */
  private pausing = false;

  notify(): void {
    if (this.resolveWaiter && !this.pausing) this.finish('notified');
    else this.pending = true;
  }

  /** Drops a pending wake-up: the poll about to start sees what it announced. */
  consume(): void {
    this.pending = false;
  }

  /** Resolves on a (pending or new) notification, after `ms`, or on close. */
  wait(ms: number): Promise<WakeReason> {
    if (this.closed) return Promise.resolve('closed');
    if (this.pending) {
      this.pending = false;
      return Promise.resolve('notified');
    }
    return this.waiter(ms, false);
  }

  /**
   * Resolves after `ms` or on close, whatever is notified meanwhile (kept pending for the next
   * wait()): the back-off after a failure, which notifications must not cut short (review 45:
   * an application emitting every 50 ms turned the relay's 1 s back-off into a retry per emit).
   */
  pause(ms: number): Promise<WakeReason> {
    if (this.closed) return Promise.resolve('closed');
    return this.waiter(ms, true);
  }

  private waiter(ms: number, pausing: boolean): Promise<WakeReason> {
    this.pausing = pausing;
    return new Promise<WakeReason>((resolve) => {
      const timer = setTimeout(() => this.finish('timeout'), ms);
      this.resolveWaiter = (reason) => {
        clearTimeout(timer);
        resolve(reason);
      };
    });
  }

  close(): void {
    this.closed = true;
    this.finish('closed');
  }

  private finish(reason: WakeReason): void {
    const resolve = this.resolveWaiter;
    this.resolveWaiter = undefined;
    this.pausing = false;
    resolve?.(reason);
  }
}
