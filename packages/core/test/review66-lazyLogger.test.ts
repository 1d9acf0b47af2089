/**
 * Review 66: core's loggerOption (review 63) reads each of the logger's four methods when the
 * component is created, outside any guard. A logger whose getter throws at that moment (a facade
 * over a logger configured later, `get info() { return this.inner.info }`) now makes createRelay
 * throw that getter's TypeError: not a FerryConfigError naming `logger`, as every other refused
 * option is, and not the "a method missing costs its line and nothing else" guardLogger promises
 * (it looks each method up at call time, so the facade worked before).
 */
import { createRelay, isFerryError, type Logger } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** A logger facade whose methods exist once configure() gave it the real logger. */
class LazyLogger {
  private inner: Logger | undefined;
  configure(inner: Logger): void {
    this.inner = inner;
  }
  get debug(): Logger['debug'] {
    return (this.inner as Logger).debug;
  }
  get info(): Logger['info'] {
    return (this.inner as Logger).info;
  }
  get warn(): Logger['warn'] {
    return (this.inner as Logger).warn;
  }
  get error(): Logger['error'] {
    return (this.inner as Logger).error;
  }
}

it('createRelay with a logger whose getters throw is created or refused with FerryConfigError naming logger', async () => {
  let relay: ReturnType<typeof createRelay> | undefined;
  const outcome = (() => {
    try {
      relay = createRelay({ db: t.db, publisher: new InMemoryPublisher(), logger: new LazyLogger() });
      return 'created';
    } catch (error) {
      return isFerryError(error, 'FERRY_CONFIG_INVALID')
        ? `FERRY_CONFIG_INVALID ${(error as { option?: string }).option ?? ''}`
        : `${(error as Error).name}: ${(error as Error).message}`;
    }
  })();
  try {
    expect(outcome).toMatch(/^(created|FERRY_CONFIG_INVALID logger)$/);
  } finally {
    await relay?.close();
  }
});
