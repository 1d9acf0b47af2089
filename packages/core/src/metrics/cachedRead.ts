import { settlesWithin } from '../outbox/settle';

export type ReadFailure = 'timeout' | 'error';

export interface CachedReadOptions {
  /** How long a scrape waits for the read; then it gets the last values. */
  readonly timeoutMs: number;
  /** A successful read is reused for this long; 0 reads on every scrape. */
  readonly cacheMs: number;
  readonly onFailure: (failure: ReadFailure, error: unknown) => void;
  readonly now?: () => number;
}

/**
 * A read on scrape, shared and bounded: concurrent callers share one attempt, one read at most is
 * in flight (a read that outlives its deadline is not started again while it hangs, and its late
 * result still becomes the last value), and a caller never waits past `timeoutMs`: it then gets
 * the last successful value (null before the first) and the failure is reported once per attempt.
 */
export class CachedRead<T> {
  private last: { readonly value: T; readonly at: number } | null = null;
  private attempt: Promise<T | null> | null = null;
  private inFlight: Promise<T> | null = null;
  private closed = false;
  private readonly now: () => number;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly options: CachedReadOptions,
  ) {
    this.now = options.now ?? (() => performance.now());
  }

  current(): Promise<T | null> {
    if (this.closed) return Promise.resolve(this.last?.value ?? null);
    if (this.last && this.now() - this.last.at < this.options.cacheMs)
      return Promise.resolve(this.last.value);
    this.attempt ??= this.refresh().finally(() => {
      this.attempt = null;
    });
    return this.attempt;
  }

  /**
   * No read starts after this (current() gives the last value); resolves once the read in
   * flight, if any, has settled, so the database it reads can then be closed. Safe twice.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.inFlight?.then(
      () => undefined,
      () => undefined,
    );
  }

  private async refresh(): Promise<T | null> {
    const read = (this.inFlight ??= this.start());
    if (!(await settlesWithin(read, this.options.timeoutMs))) {
      this.options.onFailure('timeout', null);
      return this.last?.value ?? null;
    }
    try {
      return await read;
    } catch (error) {
      this.options.onFailure('error', error);
      return this.last?.value ?? null;
    }
  }

  private start(): Promise<T> {
    const read = new Promise<T>((resolve) => resolve(this.read()));
    void read
      .then(
        (value) => {
          this.last = { value, at: this.now() };
        },
        () => undefined,
      )
      .finally(() => {
        this.inFlight = null;
      });
    return read;
  }
}
