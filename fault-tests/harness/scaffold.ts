/**
 * What every fault suite needs around its scenario, owned in one place: the resources a scenario
 * opens (inboxes, relays, consumers, publishers, connections, Prisma clients, gates) are handed to
 * `suite.defer(...)` as they are opened, and the suite undoes them after the file's tests, in
 * reverse order, each bounded so a close that hangs (a broker that is down) cannot hang the suite,
 * and each failure ignored so one broken close does not leave the others open.
 *
 * Call `faultSuite()` at the top of the `describe`, before the file's own `afterAll` (jest runs
 * afterAll hooks in declaration order): the scenario's resources are then closed before the
 * database is dropped and the broker node disposed.
 */
export interface FaultSuite {
  /** Registers undo steps (e.g. `() => inbox.close()`), undone last-registered first. */
  defer(...steps: (() => unknown)[]): void;
}

/** Default bound of one undo step. */
export const CLEANUP_BOUND_MS = 15_000;

/** Cleanup step that cannot hang the suite: settles after `ms` whatever happens. */
export async function bounded(work: Promise<unknown>, ms = CLEANUP_BOUND_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    work.catch(() => undefined),
    new Promise((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}

export function faultSuite(boundMs = CLEANUP_BOUND_MS): FaultSuite {
  const steps: (() => unknown)[] = [];
  afterAll(async () => {
    for (const step of steps.splice(0).reverse()) {
      await bounded(
        Promise.resolve().then(() => step()),
        boundMs,
      );
    }
  });
  return {
    defer(...more) {
      steps.push(...more);
    },
  };
}
