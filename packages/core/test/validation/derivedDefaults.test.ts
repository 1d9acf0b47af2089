// Review finding (failed first): a lease inside its documented bounds was refused while the other
// options kept their defaults (outbox lease.duration 60 s / 120 s, stuckThreshold 120 s, inbox
// worker.leaseMs 10 s / 3 s), the error naming a heartbeat option the user never set. A default
// that depends on another option is derived from it when the user did not set it; an error names
// the options the user set, or says which default conflicts.
import { resolveInboxOptions, resolveOutboxOptions } from '@ferry/core';
import { resolveBackoff } from '@ferry/core/transport';

const handlers = { orders: async () => undefined };

describe('a default that depends on another option follows it', () => {
  it.each([100, 1_000, 60_000, 120_000, 299_999, 2_147_483_647])(
    'outbox lease.duration %d with the heartbeat options at their defaults',
    (duration) => {
      const lease = resolveOutboxOptions({ lease: { duration } }).lease;
      expect(lease.duration).toBe(duration);
      expect(lease.heartbeatInterval * 2).toBeLessThan(duration);
      expect(lease.heartbeatInterval).toBeLessThanOrEqual(60_000);
    },
  );

  it('outbox stuckThreshold 120000 (the deprecated alias) with the heartbeat at its default', () => {
    expect(resolveOutboxOptions({ stuckThreshold: 120_000 }).lease.duration).toBe(120_000);
  });

  it('keeps the documented defaults where they fit', () => {
    expect(resolveOutboxOptions({}).lease.heartbeatInterval).toBe(60_000);
    expect(resolveOutboxOptions({ lease: { duration: 180_001 } }).lease.heartbeatInterval).toBe(60_000);
    expect(resolveInboxOptions({ handlers }).worker.heartbeatIntervalMs).toBe(5_000);
  });

  it.each([1, 2, 50, 100])(
    'outbox lease.heartbeatFailureTolerance %d with the interval at its default',
    (tolerance) => {
      const lease = resolveOutboxOptions({ lease: { heartbeatFailureTolerance: tolerance } }).lease;
      expect(lease.heartbeatInterval * tolerance).toBeLessThan(lease.duration);
    },
  );

  it.each([100, 3_000, 10_000, 10_001, 86_400_000])(
    'inbox worker.leaseMs %d with worker.heartbeatIntervalMs at its default',
    (leaseMs) => {
      const worker = resolveInboxOptions({ handlers, worker: { leaseMs } }).worker;
      expect(worker.leaseMs).toBe(leaseMs);
      expect(worker.heartbeatIntervalMs * 2).toBeLessThan(leaseMs);
    },
  );

  it('outbox retry.initialDelay above the default maxDelay raises the cap to it', () => {
    const retry = resolveOutboxOptions({ retry: { initialDelay: 100_000_000 } }).retry;
    expect(retry.maxDelay).toBe(100_000_000);
  });

  it('outbox listen.reconnectInitialDelay above the default reconnectMaxDelay', () => {
    const listen = resolveOutboxOptions({ listen: { reconnectInitialDelay: 60_000 } }).listen;
    expect(listen.reconnectMaxDelay).toBe(60_000);
  });

  it('inbox worker.retryBaseMs above the default worker.retryMaxMs', () => {
    const worker = resolveInboxOptions({ handlers, worker: { retryBaseMs: 600_000 } }).worker;
    expect(worker.retryMaxMs).toBe(600_000);
  });

  it("a transport backoff's initialMs above the default maxMs", () => {
    const defaults = { initialMs: 1_000, maxMs: 60_000, multiplier: 2, jitter: 'none' } as const;
    expect(resolveBackoff('retryBackoff', { initialMs: 120_000 }, defaults).maxMs).toBe(120_000);
  });
});

// FerryConfigError's message is `invalid option <option>: <reason>`.
describe('a conflict with a default says so', () => {
  it('an outbox heartbeat interval too long for the default lease names the default', () => {
    expect(() => resolveOutboxOptions({ lease: { heartbeatInterval: 200_000 } })).toThrow(
      'invalid option lease.heartbeatInterval: lease.heartbeatInterval (200000) must be less than half of lease.duration (300000, the default)',
    );
  });

  it('an inbox heartbeat too long for the default lease names the default', () => {
    expect(() => resolveInboxOptions({ handlers, worker: { heartbeatIntervalMs: 20_000 } })).toThrow(
      'invalid option worker.heartbeatIntervalMs: worker.heartbeatIntervalMs (20000) must be less than half of worker.leaseMs (30000, the default)',
    );
  });

  it('a tolerance that leaves no interval names only the options the user set', () => {
    expect(() => resolveOutboxOptions({ lease: { duration: 100, heartbeatFailureTolerance: 100 } })).toThrow(
      'invalid option lease.heartbeatFailureTolerance: leaves no lease.heartbeatInterval of at least 10: lease.heartbeatFailureTolerance (100) x 10 must be less than lease.duration (100)',
    );
  });

  it('a retry cap below the default initial delay names the default', () => {
    expect(() => resolveOutboxOptions({ retry: { maxDelay: 500 } })).toThrow(
      'invalid option retry.maxDelay: must be at least retry.initialDelay (1000, the default), got 500',
    );
  });

  it('both set and in conflict: the error names both values, no default', () => {
    expect(() => resolveOutboxOptions({ lease: { duration: 1_000, heartbeatInterval: 500 } })).toThrow(
      'invalid option lease.heartbeatInterval: lease.heartbeatInterval (500) must be less than half of lease.duration (1000)',
    );
  });
});
