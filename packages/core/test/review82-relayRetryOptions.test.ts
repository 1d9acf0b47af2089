/**
 * Review 82 (outbox relay options, spec 000 "Configuration"), failing on main.
 *
 * 1. `retry.maxRetries` given to createRelay is accepted, resolved, shown in `relay.options`, and
 *    used for nothing. The spec configures `retry: { maxRetries, backoff, initialDelay }` together
 *    and docs/outbox.md lists `retry.maxRetries` among the relay's options ("Delivery attempts
 *    before FAILED. Stored per row at emit time (max_retries); the relay's value is not used for
 *    rows already written"), which reads as: rows written from now on get it. They do not: rows
 *    get `createEmitter({ retry: { maxRetries } })`'s value (emit(): 5), whatever the relay says.
 *    An operator who sets `retry: { maxRetries: 1 }` on the relay to stop hammering a broker still
 *    gets five attempts per event; one who raises it to 20 for a flaky destination gets events
 *    FAILED after five. @ferry/nestjs wires the value into its emitter; core's createRelay does not.
 *    Should: either refuse `retry.maxRetries` on createRelay (FerryConfigError naming it, "set
 *    it on createEmitter"), as every option that does nothing is refused, or apply it; and the doc
 *    must say which. Where: outbox/options.ts (resolveRetryOptions keeps it for the relay),
 *    relayConfig.ts / emit.ts.
 *
 * 2. The deprecated alias `stuckThreshold`, out of bounds, is refused naming `lease.duration`, an
 *    option the caller never wrote (`invalid option lease.duration: must be an integer between 100
 *    and 2147483647, got 50`). The package README, "Options": a FerryConfigError's `option` "names
 *    the key as written". Should: option `stuckThreshold`. Where: outbox/options.ts, resolveLease
 *    (the alias's value is checked as 'lease.duration').
 */
import { createRelay, emit, FerryConfigError, resolveOutboxOptions } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { silent, statusOf } from './outbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

describe('review82: the relay’s retry.maxRetries', () => {
  it('is refused, or limits the delivery attempts of the events it relays', async () => {
    const failing = new InMemoryPublisher({ decide: () => ({ retryable: 'broker said no' }) });
    let relay: ReturnType<typeof createRelay> | null = null;
    const refused = (() => {
      try {
        relay = createRelay({
          db: t.db,
          publisher: failing,
          logger: silent,
          options: { retry: { maxRetries: 1 } },
        });
        return null;
      } catch (error) {
        return error;
      }
    })();
    if (refused !== null) {
      expect(refused).toBeInstanceOf(FerryConfigError);
      expect((refused as FerryConfigError).option).toBe('retry.maxRetries');
      return;
    }
    const { id } = await emit(t.db, { type: 'order.created', payload: { orderId: 1 } });
    await relay!.runOnce();
    await relay!.close();
    const row = await statusOf(t.db, id);
    // On main: accepted, and the event is PENDING for a second attempt (max_retries 5 on the row).
    expect({ status: row.status, retry_count: row.retry_count }).toEqual({
      status: 'FAILED',
      retry_count: 1,
    });
  });
});

describe('review82: the deprecated stuckThreshold out of bounds', () => {
  it('is refused naming stuckThreshold, the key as written', () => {
    let error: unknown = null;
    try {
      resolveOutboxOptions({ stuckThreshold: 50 });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(FerryConfigError);
    // On main: 'lease.duration'.
    expect((error as FerryConfigError).option).toBe('stuckThreshold');
  });
});
