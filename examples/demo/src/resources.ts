/**
 * What a run has started so far, closed in reverse order whether the run finished or failed part
 * way: a start-up that fails at its third step still closes the first two, so the process prints
 * the error and exits instead of living on with a worker, a relay or a server nobody stops.
 */
export class Resources {
  private readonly closers: (() => Promise<void>)[] = [];

  /** Registers how to close something just started; returns it. */
  add<T>(resource: T, close: (resource: T) => Promise<void>): T {
    this.closers.push(() => close(resource));
    return resource;
  }

  /** Closes everything registered, last first; every closer runs, the first failure is rethrown. */
  async close(): Promise<void> {
    let failure: { error: unknown } | undefined;
    for (const close of this.closers.splice(0).reverse()) {
      try {
        await close();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }
}
