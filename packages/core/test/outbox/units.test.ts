import { Writable } from 'node:stream';
import pino from 'pino';
import {
  createEmitter,
  createRelay,
  FerryConfigError,
  OUTBOX_DEFAULTS,
  resolveOutboxOptions,
  type SqlExecutor,
} from '@ferry/core';
import { outboxRetryDelayMs } from '@ferry/core/internal/testing';
import { WakeSignal } from '../../src/wake/wakeSignal';

/** A relay built and never started: its database is never asked anything. */
const unusedDb: SqlExecutor = {
  inTransaction: false,
  query: async () => [],
  execute: async () => 0,
  transaction: async (work) => work(unusedDb),
};

describe('resolveOutboxOptions', () => {
  it('fills the spec defaults', () => {
    const o = resolveOutboxOptions();
    expect(o.retry).toEqual({
      maxRetries: 5,
      backoff: 'exponential',
      initialDelay: 1_000,
      maxDelay: 86_400_000,
    });
    expect(o.lease).toEqual({ duration: 300_000, heartbeatInterval: 60_000, heartbeatFailureTolerance: 1 });
    expect(o).toMatchObject({
      pollInterval: 1_000,
      batchSize: 500,
      maxBatchBytes: 64 * 1024 * 1024,
      recoveryBatchSize: 1_000,
      poisonGuard: { maxClaims: 10 },
      ordering: { failedHead: 'block' },
      onSent: 'keep',
      shutdownTimeout: 30_000,
      channel: 'ferry_outbox',
      warnings: [],
    });
  });

  const bad: Array<[string, object]> = [
    ['retry.maxDelay', { retry: { maxDelay: 2_147_483_648 } }],
    ['retry.initialDelay', { retry: { initialDelay: 2_147_483_648 } }],
    ['retry.initialDelay', { retry: { initialDelay: -1 } }],
    ['retry.maxRetries', { retry: { maxRetries: 0 } }],
    ['retry.maxRetries', { retry: { maxRetries: 1.5 } }],
    ['retry.backoff', { retry: { backoff: 'linear' } }],
    ['retry.maxDelay', { retry: { initialDelay: 5_000, maxDelay: 1_000 } }],
    ['lease.duration', { lease: { duration: 2_147_483_648 } }],
    ['lease.heartbeatInterval', { lease: { duration: 1_000, heartbeatInterval: 500 } }],
    ['lease.heartbeatFailureTolerance', { lease: { heartbeatFailureTolerance: 0 } }],
    [
      'lease.heartbeatFailureTolerance',
      { lease: { duration: 1_000, heartbeatInterval: 400, heartbeatFailureTolerance: 3 } },
    ],
    ['stuckThreshold', { stuckThreshold: 1_000, lease: { duration: 2_000, heartbeatInterval: 100 } }],
    ['batchSize', { batchSize: 0 }],
    ['maxBatchBytes', { maxBatchBytes: 0 }],
    ['maxBatchBytes', { maxBatchBytes: 1.5 }],
    ['maxBatchBytes', { maxBatchBytes: '64MiB' }],
    ['poisonGuard.maxClaims', { poisonGuard: { maxClaims: 0 } }],
    ['ordering.failedHead', { ordering: { failedHead: 'ignore' } }],
    ['onSent', { onSent: 'drop' }],
    ['onSent', { onSent: 'DELETE' }],
    ['onSent', { onSent: true }],
    ['onSent', { onSent: null }],
    ['channel', { channel: 'Bad-Channel' }],
    ['pollInterval', { pollInterval: 'fast' }],
  ];
  it.each(bad)('rejects a bad %s with FERRY_CONFIG_INVALID naming it', (option, input) => {
    let error: unknown;
    try {
      resolveOutboxOptions(input);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(FerryConfigError);
    expect(error).toMatchObject({ code: 'FERRY_CONFIG_INVALID', option });
  });

  it('accepts the upper bound 2,147,483,647 ms and small test leases', () => {
    expect(resolveOutboxOptions({ retry: { maxDelay: 2_147_483_647 } }).retry.maxDelay).toBe(2_147_483_647);
    expect(resolveOutboxOptions({ lease: { duration: 200, heartbeatInterval: 50 } }).lease.duration).toBe(
      200,
    );
  });

  it('accepts stuckThreshold as a deprecated alias for lease.duration, with a warning', () => {
    const o = resolveOutboxOptions({ stuckThreshold: 120_000, lease: { heartbeatInterval: 30_000 } });
    expect(o.lease.duration).toBe(120_000);
    expect(o.warnings).toEqual(['stuckThreshold is deprecated; use lease.duration']);
  });

  it('the relay logs the stuckThreshold deprecation warning', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const relay = createRelay({
      db: unusedDb,
      publisher: { publish: async () => [] },
      logger: pino({ level: 'warn' }, sink),
      options: { stuckThreshold: 120_000, lease: { heartbeatInterval: 30_000 } },
    });
    expect(relay.options.lease.duration).toBe(120_000);
    expect(lines.join('')).toContain('stuckThreshold is deprecated');
  });

  it('takes options it resolved itself as they are: one resolution, one warning', () => {
    const resolved = resolveOutboxOptions({ stuckThreshold: 120_000, lease: { heartbeatInterval: 30_000 } });
    expect(resolveOutboxOptions(resolved)).toBe(resolved);
    const warnings: unknown[] = [];
    const ignore = () => undefined;
    const relay = createRelay({
      db: unusedDb,
      publisher: { publish: async () => [] },
      logger: {
        debug: ignore,
        info: ignore,
        error: ignore,
        warn: (...line: unknown[]) => warnings.push(line),
      },
      options: resolved,
    });
    expect(relay.options).toBe(resolved);
    expect(warnings).toHaveLength(1);
    // A copy is not core's own result: it is checked as written (and `warnings` is no option).
    expect(() => resolveOutboxOptions({ ...resolved })).toThrow(/warnings/);
  });

  it('has a default for every numeric option in one table', () => {
    expect(OUTBOX_DEFAULTS['retry.maxDelay'].max).toBe(2_147_483_647);
  });
});

describe('the observer option (createRelay, createEmitter)', () => {
  const relayWith = (observer: unknown) => () =>
    createRelay({
      db: unusedDb,
      publisher: { publish: async () => [] },
      observer: observer as never,
    });
  const emitterWith = (observer: unknown) => () => createEmitter({ observer: observer as never });

  it.each([
    ['createRelay', relayWith],
    ['createEmitter', emitterWith],
  ])('%s refuses the old object of hooks, naming the option and the way to migrate', (_name, make) => {
    const hooks = { sent: () => undefined, circuitOpened: () => undefined };
    expect(make(hooks)).toThrow(FerryConfigError);
    expect(make(hooks)).toThrow(
      'invalid option observer: must be a function: observer is now a function of { type } events, ' +
        'see CHANGELOG (got an object of hooks: sent, circuitOpened)',
    );
    expect(make({})).toThrow(/observer is now a function of \{ type \} events, see CHANGELOG/);
  });

  it.each([
    ['createRelay', relayWith],
    ['createEmitter', emitterWith],
  ])('%s refuses a value that is no function, showing what it received', (_name, make) => {
    for (const [value, shown] of [
      ['log', '"log" (string)'],
      [null, 'null'],
      [[() => undefined], '(array)'],
    ] as const) {
      let error: unknown;
      try {
        make(value)();
      } catch (e) {
        error = e;
      }
      expect(error).toMatchObject({ code: 'FERRY_CONFIG_INVALID', option: 'observer' });
      expect((error as Error).message).toContain('must be a function of { type } events, got ');
      expect((error as Error).message).toContain(shown);
    }
  });

  it('takes a function, or nothing', () => {
    expect(relayWith(() => undefined)).not.toThrow();
    expect(relayWith(undefined)).not.toThrow();
    expect(emitterWith(async () => undefined)).not.toThrow();
  });
});

describe('outboxRetryDelayMs', () => {
  const retry = resolveOutboxOptions().retry;
  it('follows the spec table for exponential backoff', () => {
    expect([1, 2, 3, 4].map((n) => outboxRetryDelayMs(retry, n))).toEqual([1_000, 2_000, 4_000, 8_000]);
  });
  it('caps at maxDelay and never overflows', () => {
    expect(outboxRetryDelayMs({ ...retry, maxDelay: 5_000 }, 10)).toBe(5_000);
    expect(outboxRetryDelayMs(retry, 10_000)).toBe(86_400_000);
    expect(outboxRetryDelayMs({ ...retry, initialDelay: 0 }, 10_000)).toBe(0);
  });
  it('is constant for fixed backoff', () => {
    expect([1, 2, 3].map((n) => outboxRetryDelayMs({ ...retry, backoff: 'fixed' }, n))).toEqual([
      1_000, 1_000, 1_000,
    ]);
  });
});

describe('WakeSignal', () => {
  it('coalesces a burst of notifications into one immediate wake-up', async () => {
    const signal = new WakeSignal();
    for (let i = 0; i < 100; i += 1) signal.notify();
    expect(await signal.wait(600_000)).toBe('notified');
    const next = signal.wait(20);
    expect(await next).toBe('timeout');
  });
  it('wakes a waiter on notify and on close', async () => {
    const signal = new WakeSignal();
    const waiting = signal.wait(600_000);
    signal.notify();
    expect(await waiting).toBe('notified');
    const closing = signal.wait(600_000);
    signal.close();
    expect(await closing).toBe('closed');
    expect(await signal.wait(600_000)).toBe('closed');
  });
});
