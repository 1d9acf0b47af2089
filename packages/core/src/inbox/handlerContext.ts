import { InboxWrapperMisuseError } from './errors';
import type { InboxHandlerContext, InboxHandlerContextWrapper } from './types';

/**
 * Runs `handler` inside the wrappers (outermost first). Each wrapper must call and await
 * `next()` exactly once. Skipping it, calling it twice, returning before it settled, or
 * resolving although it failed all reject with InboxWrapperMisuseError (cause: the handler's
 * error, if any), so misuse can never produce a completion. `next()` after the signal aborted
 * rejects without running the inner work.
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

async function guard<TTx>(
  wrapper: InboxHandlerContextWrapper<TTx>,
  index: number,
  context: InboxHandlerContext<TTx>,
  inner: () => Promise<void>,
): Promise<void> {
  let calls = 0;
  let settled = false;
  let failure: { error: unknown } | undefined;
  const next = (): Promise<void> => {
    calls += 1;
    if (calls > 1) return Promise.reject(new InboxWrapperMisuseError(`wrapper ${index} called next() twice`));
    if (context.signal.aborted) {
      settled = true;
      failure = { error: context.signal.reason };
      return Promise.reject(
        new InboxWrapperMisuseError(`wrapper ${index} started canceled work`, context.signal.reason),
      );
    }
    return inner().then(
      () => {
        settled = true;
      },
      (error: unknown) => {
        settled = true;
        failure = { error };
        throw error;
      },
    );
  };
  await wrapper(context, next);
  if (calls === 0) throw new InboxWrapperMisuseError(`wrapper ${index} did not call next()`);
  if (calls > 1) throw new InboxWrapperMisuseError(`wrapper ${index} called next() more than once`);
  if (!settled) throw new InboxWrapperMisuseError(`wrapper ${index} returned before next() settled`);
  if (failure) {
    const { error } = failure;
    if (error instanceof InboxWrapperMisuseError) throw error;
    throw new InboxWrapperMisuseError(`wrapper ${index} swallowed a handler failure`, error);
  }
}
