import { settlesWithin } from '@ferry/core/transport';

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
  await settlesWithin(work, ms);
}

/**
 * A file's own cleanup of several steps (`afterAll(() => cleanUp([() => database?.drop(), () =>
 * node?.dispose()]))`): runs every step in the order given, each bounded by `ms` and each whatever
 * the earlier ones did (a drop that fails must not leave the private broker running), then throws
 * an AggregateError of what failed or did not finish, so the leftover is reported (review 75).
 */
export async function cleanUp(steps: readonly (() => unknown)[], ms = CLEANUP_BOUND_MS): Promise<void> {
  const failures: unknown[] = [];
  for (const [index, step] of steps.entries()) {
    let failure: { error: unknown } | undefined;
    const work = Promise.resolve()
      .then(() => step())
      .catch((error: unknown) => {
        failure = { error };
      });
    if (!(await settlesWithin(work, ms)))
      failures.push(new Error(`cleanup step ${index + 1} of ${steps.length} did not finish within ${ms} ms`));
    else if (failure) failures.push(failure.error);
  }
  if (failures.length > 0)
    throw new AggregateError(failures, `${failures.length} of ${steps.length} cleanup steps failed`);
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

/** Bound of a private broker's dispose (`rabbitmqctl stop` and the wait for the VM take up to 2 min). */
export const BROKER_CLEANUP_MS = 120_000;

/** Timeout of a file's cleanUp hook: room for its bounded steps, past jest's 60 s default. */
export const CLEANUP_HOOK_MS = 300_000;
