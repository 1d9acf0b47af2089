import { isFerryError } from '@ferry/core';
import { isBatchWideFailure } from '@ferry/core/transport';

/**
 * The error `work` fails with, as a comparable shape (code, retriable, `details.field`, whether a
 * transport takes it for a batch-wide failure), for the cases of a pool or client the application
 * ended (endedPool.test.ts, endedClient.test.ts).
 */
export async function failure(work: () => unknown): Promise<unknown> {
  try {
    await work();
    return 'no error';
  } catch (error) {
    if (!isFerryError(error)) return { untyped: String(error) };
    return {
      code: error.code,
      retriable: error.retriable,
      field: error.details.field,
      batchWide: isBatchWideFailure(error),
    };
  }
}

/** A call on a pool or client ended after ferry was given it: FERRY_CLOSED, naming `field`. */
export function closed(field?: string) {
  return { code: 'FERRY_CLOSED', retriable: false, field, batchWide: true };
}
