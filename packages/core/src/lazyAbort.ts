/**
 * An abort signal made only when something reads it. The inbox worker holds two per receipt
 * (the handler's signal, the lease's) and most handlers never look at either: an AbortSignal
 * costs far more to create and collect than the receipt's other bookkeeping, so it is not made
 * for nothing. `abort` before the first read is remembered; the signal is then born aborted.
 */
export class LazyAbort {
  private controller: AbortController | undefined;
  private aborted: { readonly reason: unknown } | undefined;

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.aborted.reason);
    }
    return this.controller.signal;
  }

  /** Whether abort() ran, without making the signal. */
  get isAborted(): boolean {
    return this.aborted !== undefined;
  }

  /** The reason abort() was given (undefined before). */
  get reason(): unknown {
    return this.aborted?.reason;
  }

  /** Aborts once; later calls are ignored, as AbortController's. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = { reason };
    this.controller?.abort(reason);
  }
}
