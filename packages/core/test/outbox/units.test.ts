import { Writable } from 'node:stream';
import pino from 'pino';
import {
  createRelay,
  FerryConfigError,
  OUTBOX_DEFAULTS,
  resolveOutboxOptions,
  retryDelayMs,
  type SqlExecutor,
} from '@ferry/core';
import { Heartbeat } from '../../src/outbox/heartbeat';
import { WakeSignal } from '../../src/outbox/wakeSignal';
import { waitFor } from './helpers';

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
      batchSize: 100,
      recoveryBatchSize: 1_000,
      poisonGuard: { maxClaims: 10 },
      ordering: { failedHead: 'block' },
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
    ['stuckThreshold', { stuckThreshold: 1_000, lease: { duration: 2_000, heartbeatInterval: 100 } }],
    ['batchSize', { batchSize: 0 }],
    ['poisonGuard.maxClaims', { poisonGuard: { maxClaims: 0 } }],
    ['ordering.failedHead', { ordering: { failedHead: 'ignore' } }],
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
      db: {} as SqlExecutor,
      publisher: { publish: async () => [] },
      logger: pino({ level: 'warn' }, sink),
      options: { stuckThreshold: 120_000, lease: { heartbeatInterval: 30_000 } },
    });
    expect(relay.options.lease.duration).toBe(120_000);
    expect(lines.join('')).toContain('stuckThreshold is deprecated');
  });

  it('has a default for every numeric option in one table', () => {
    expect(OUTBOX_DEFAULTS['retry.maxDelay'].max).toBe(2_147_483_647);
  });
});

describe('retryDelayMs', () => {
  const retry = resolveOutboxOptions().retry;
  it('follows the spec table for exponential backoff', () => {
    expect([1, 2, 3, 4].map((n) => retryDelayMs(retry, n))).toEqual([1_000, 2_000, 4_000, 8_000]);
  });
  it('caps at maxDelay and never overflows', () => {
    expect(retryDelayMs({ ...retry, maxDelay: 5_000 }, 10)).toBe(5_000);
    expect(retryDelayMs(retry, 10_000)).toBe(86_400_000);
    expect(retryDelayMs({ ...retry, initialDelay: 0 }, 10_000)).toBe(0);
  });
  it('is constant for fixed backoff', () => {
    expect([1, 2, 3].map((n) => retryDelayMs({ ...retry, backoff: 'fixed' }, n))).toEqual([
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

describe('Heartbeat', () => {
  it('tolerates fewer consecutive failures than the tolerance, then loses the lease', async () => {
    const results = [new Error('a'), 1, new Error('b'), new Error('c')];
    let lost: string | undefined;
    const heartbeat = new Heartbeat(
      async () => {
        const next = results.shift() ?? 1;
        if (next instanceof Error) throw next;
        return next;
      },
      { intervalMs: 5, tolerance: 2 },
      (reason) => (lost = reason),
    );
    heartbeat.start();
    await waitFor(() => lost !== undefined);
    expect(lost).toMatch(/failed 2 time\(s\) in a row: c/);
    expect(results).toEqual([]);
    await heartbeat.stop();
  });
  it('loses the lease at once when no row is held any more', async () => {
    let lost: string | undefined;
    const heartbeat = new Heartbeat(
      async () => 0,
      { intervalMs: 5, tolerance: 5 },
      (r) => (lost = r),
    );
    heartbeat.start();
    await waitFor(() => lost !== undefined);
    expect(lost).toMatch(/no longer held/);
  });
});
