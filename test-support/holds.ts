/** Holding things open on purpose: a gate a test opens, the only connection of a pool, live timers. */

/** A promise with its resolve function, to hold work until the test opens it. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** What holdConnection needs of a Prisma client: interactive transactions. */
interface TransactionClient {
  $transaction<T>(
    work: (tx: { $executeRawUnsafe(query: string): Promise<number> }) => Promise<T>,
    options: { maxWait: number; timeout: number },
  ): Promise<T>;
}

/**
 * Holds one connection of `client` (give it a pool of one: `newClient({ max: 1 })`) in an open
 * transaction until `release()`, or at the latest after `deadlineMs`. Resolves once it holds it.
 */
export async function holdConnection(
  client: TransactionClient,
  deadlineMs: number,
): Promise<{ release: () => Promise<void> }> {
  const entered = gate();
  const released = gate();
  const timer = setTimeout(released.open, deadlineMs);
  const holder = client.$transaction(
    async (tx) => {
      await tx.$executeRawUnsafe('SELECT 1');
      entered.open();
      await released.promise;
    },
    { maxWait: 10_000, timeout: deadlineMs + 10_000 },
  );
  await Promise.race([entered.promise, holder]);
  return {
    async release() {
      clearTimeout(timer);
      released.open();
      await holder;
    },
  };
}

/** Timers that keep the process running (a wait must leave none behind). */
export function liveTimers(): number {
  return process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
}
