import { settlesWithin } from '@ferry/core/transport';

/**
 * What a run has started so far, closed in reverse order whether the run finished or failed part
 * way: a start-up that fails at its third step still closes the first two, so the process prints
 * the error and exits instead of living on with a worker, a relay or a server nobody stops.
 */
export class Resources {
  private readonly closers: (() => Promise<void>)[] = [];
  private readonly closeTimeoutMs: number;

  /**
   * `closeTimeoutMs` bounds each closer: one that never settles (a broker gone silent) is a
   * failure and the others still close. ferry's own closes are bounded below it (10 s each).
   */
  constructor(options: { closeTimeoutMs?: number } = {}) {
    this.closeTimeoutMs = options.closeTimeoutMs ?? 60_000;
  }

  /** Registers how to close something just started; returns it. */
  add<T>(resource: T, close: (resource: T) => Promise<void>): T {
    this.closers.push(() => close(resource));
    return resource;
  }

  /**
   * Closes everything registered, last first, each within closeTimeoutMs; every closer runs, the
   * first failure is rethrown. Safe to call twice: what was closed is not closed again.
   */
  async close(): Promise<void> {
    let failure: { error: unknown } | undefined;
    for (const close of this.closers.splice(0).reverse()) {
      try {
        await this.bounded(close);
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }

  /** close() after a failed start or run: that failure is the one to report, not a close failing after it. */
  async closeQuietly(): Promise<void> {
    await this.close().catch(() => undefined);
  }

  private async bounded(close: () => Promise<void>): Promise<void> {
    const closing = close();
    if (!(await settlesWithin(closing, this.closeTimeoutMs))) {
      throw new Error(`a resource did not finish closing within ${this.closeTimeoutMs} ms`);
    }
    await closing; // settled: its own failure, if any
  }
}
