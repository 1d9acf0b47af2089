/**
 * Review 66: core's loggerOption (review 63) reads each of the logger's four methods when the
 * component is created, outside any guard. A logger whose getter throws at that moment (a facade
 * over a logger configured later, `get info() { return this.inner.info }`) now makes createRelay
 * throw that getter's TypeError: not a FerryConfigError naming `logger`, as every other refused
 * option is, and not the "a method missing costs its line and nothing else" guardLogger promises
 * (it looks each method up at call time, so the facade worked before).
 */
import { createEmitter, createRelay, isFerryError, type Logger } from '@ferry/core';
import { guardLogger, loggerOption } from '@ferry/core/transport';
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

describe('review66 class: a logger whose reads throw at creation', () => {
  /** A Proxy whose every read throws until `ready` gets the real logger. */
  function lazyProxy(): { logger: object; ready: (inner: Logger) => void } {
    let inner: Logger | undefined;
    const logger = new Proxy(
      {},
      {
        get(_target, key) {
          if (inner === undefined) throw new TypeError('logger not configured yet');
          return (inner as unknown as Record<PropertyKey, unknown>)[key];
        },
      },
    );
    return { logger, ready: (given) => (inner = given) };
  }

  it('a Proxy whose get throws is accepted by createEmitter', () => {
    expect(() => createEmitter({ logger: lazyProxy().logger as Logger })).not.toThrow();
  });

  it('is accepted by loggerOption and logs through guardLogger once configured, harmlessly before', () => {
    const { logger, ready } = lazyProxy();
    const given = loggerOption('logger', logger);
    expect(given).toBe(logger);
    const safe = guardLogger(given as Logger);
    expect(() => safe.warn({ n: 1 }, 'before')).not.toThrow();
    const lines: unknown[][] = [];
    const at = (...args: unknown[]): void => void lines.push(args);
    ready({ debug: at, info: at, warn: at, error: at });
    safe.warn({ n: 2 }, 'after');
    expect(lines).toEqual([[{ n: 2 }, 'after']]);
  });

  it('a method that reads as a non-function is still refused, naming only it', () => {
    const logger = {
      get debug(): never {
        throw new TypeError('not yet');
      },
      info: 'nope',
      warn() {},
      error() {},
    };
    let refused: unknown;
    try {
      loggerOption('logger', logger);
    } catch (error) {
      refused = error;
    }
    expect(isFerryError(refused, 'FERRY_CONFIG_INVALID')).toBe(true);
    expect((refused as Error).message).toMatch(/got an object missing info\(\)$/);
  });
});
