import { InboxWrapperMisuseError } from './errors';
import type { InboxHandlerContext, InboxHandlerContextWrapper } from './types';

/**
 * Runs `handler` inside the wrappers (outermost first). Each wrapper must call and await
 * `next()` exactly once. Skipping it, calling it twice, returning before it settled, or
 * resolving although it failed all reject with InboxWrapperMisuseError (cause: the handler's
 * error, if any), so misuse can never produce a completion. `next()` after the signal aborted,
 * or after its wrapper returned, rejects without running the inner work: a handler never runs
 * once its attempt is over (review 155). A wrapper that returned before next() settled is
 * answered once the inner work settled, so the handler never outlives its transaction's attempt.
 * Every promise `next()` answers is also handled here: a wrapper that drops one (`void next()`)
 * gets its misuse reported on the receipt, never an unhandled rejection, which ends a Node
 * process by default.
 */
export async function runWithWrappers<TTx>(
  wrappers: readonly InboxHandlerContextWrapper<TTx>[],
  context: InboxHandlerContext<TTx>,
  handler: () => Promise<void>,
): Promise<void> {
  const run = wrappers.reduceRight<() => Promise<void>>(
    (inner, wrapper, index) => () => guard(wrapper, index, context, inner),
    handler,
  );
  await run();
}

/** `promise`, marked handled: the caller may drop it; whoever awaits it still sees its rejection. */
function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

async function guard<TTx>(
  wrapper: InboxHandlerContextWrapper<TTx>,
  index: number,
  context: InboxHandlerContext<TTx>,
  inner: () => Promise<void>,
): Promise<void> {
  let calls = 0;
  let returned = false;
  let settled = false;
  let running: Promise<void> | undefined;
  let failure: { error: unknown } | undefined;
  const misuse = (reason: string, cause?: unknown): Promise<void> =>
    handled(Promise.reject(new InboxWrapperMisuseError(`wrapper ${index} ${reason}`, cause)));
  const next = (): Promise<void> => {
    calls += 1;
    if (returned) return misuse('called next() after it returned');
    if (calls > 1) return misuse('called next() twice');
    if (context.signal.aborted) {
      settled = true;
      failure = { error: context.signal.reason };
      return misuse('started canceled work', context.signal.reason);
    }
    running = inner().then(
      () => {
        settled = true;
      },
      (error: unknown) => {
        settled = true;
        failure = { error };
        throw error;
      },
    );
    return handled(running);
  };
  let thrown: { error: unknown } | undefined;
  try {
    await wrapper(context, next);
  } catch (error) {
    thrown = { error };
  }
  returned = true;
  const early = !settled;
  // The inner work of a wrapper that returned (or threw) without awaiting it ends first.
  await running?.catch(() => undefined);
  if (thrown) throw thrown.error;
  if (calls === 0) throw new InboxWrapperMisuseError(`wrapper ${index} did not call next()`);
  if (calls > 1) throw new InboxWrapperMisuseError(`wrapper ${index} called next() more than once`);
  if (early) throw new InboxWrapperMisuseError(`wrapper ${index} returned before next() settled`);
  if (failure) {
    const { error } = failure;
    if (error instanceof InboxWrapperMisuseError) throw error;
    throw new InboxWrapperMisuseError(`wrapper ${index} swallowed a handler failure`, error);
  }
}
