/** Helpers of the lifecycle-order tests (lifecycleOrders.test.ts of core and every transport). */
import { FerryError } from '@ferry/core';

/** How a ready() (or any lifecycle call) ended: 'ready', or the code of the FerryError it rejected with. */
export function readyOutcome(ready: Promise<void>): Promise<string> {
  return ready.then(
    () => 'ready',
    (error: unknown) => (error instanceof FerryError ? error.code : `untyped: ${String(error)}`),
  );
}

/**
 * Records every unhandled rejection of the file's tests and fails the test that let one
 * through (registers beforeAll / afterEach / afterAll hooks).
 */
export function failOnUnhandledRejections(): void {
  const unhandled: unknown[] = [];
  const record = (reason: unknown): void => void unhandled.push(reason);
  beforeAll(() => void process.on('unhandledRejection', record));
  afterEach(() => expect(unhandled.splice(0)).toEqual([]));
  afterAll(() => void process.off('unhandledRejection', record));
}
