/**
 * The relay running on a publisher closed under it (the application closed the publisher before
 * the relay, or both at once in a shutdown hook): a closed publisher is a broker the relay cannot
 * reach, never a verdict on the message. Each ferry publisher's lifecycle-order test runs it with
 * the real relay and PostgreSQL.
 */
import {
  createRelay,
  emitMany,
  type OutboxEvent,
  type OutboxEventInput,
  type Publisher,
  type SqlExecutor,
} from '@ferry/core';
import pino from 'pino';

export interface ClosedPublisherRun {
  /** Every event's row after the relay closed, in emit order. */
  readonly rows: readonly { id: string; status: string; retry_count: number; last_error: string | null }[];
  /** The cycles that claimed rows and ended after the publisher's close() resolved. */
  readonly cyclesAfterClose: readonly Extract<OutboxEvent, { type: 'cycle' }>[];
}

/** How many cycles that claimed rows the relay runs on the closed publisher. */
export const CYCLES_ON_CLOSED = 4;

/**
 * Emits `count` events to `destination` (maxRetries 2: two charged attempts make an event FAILED),
 * starts the relay (batches of 20, retries due at once, a circuit that never opens, so that every
 * cycle claims and publishes again), closes the publisher once the relay confirmed a first batch
 * (the next ones in flight), then lets the relay run CYCLES_ON_CLOSED cycles that claim rows on
 * the closed publisher (or until no row is pending: every one charged and FAILED, as on main before
 * the closed publisher answered `unavailable`) and closes it.
 */
export async function runRelayOnClosedPublisher(options: {
  readonly db: SqlExecutor;
  readonly publisher: Publisher & { close(): Promise<void> };
  readonly destination: string;
  readonly type?: string;
  readonly count?: number;
  readonly timeoutMs?: number;
}): Promise<ClosedPublisherRun> {
  const { db, publisher } = options;
  const count = options.count ?? 200;
  const events: OutboxEventInput[] = Array.from({ length: count }, (_, n) => ({
    type: options.type ?? 'order.placed',
    destination: options.destination,
    payload: { n },
    maxRetries: 2,
  }));
  const { ids } = await emitMany(db, events);
  const cycles: Extract<OutboxEvent, { type: 'cycle' }>[] = [];
  let closedAt: number | null = null;
  const relay = createRelay({
    db,
    publisher,
    logger: pino({ level: 'silent' }),
    observer: (event) => {
      if (event.type === 'cycle' && event.claimed > 0 && closedAt !== null) cycles.push(event);
    },
    options: {
      batchSize: 20,
      pollInterval: 10,
      retry: { initialDelay: 0, maxDelay: 1 },
      circuit: { failureThreshold: 1_000 },
    },
  });
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  const pending = async () =>
    Number(
      (
        await db.query<{ n: string }>(
          `SELECT count(*)::text AS n FROM outbox_events WHERE id::text = ANY($1) AND status = 'PENDING'`,
          [ids],
        )
      )[0]!.n,
    );
  const waitUntil = async (what: string, done: () => Promise<boolean>) => {
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  try {
    relay.start();
    await waitUntil('the relay to confirm a first batch', async () => (await pending()) < count);
    await publisher.close();
    closedAt = Date.now();
    await waitUntil(
      `${CYCLES_ON_CLOSED} cycles on the closed publisher`,
      async () => cycles.length >= CYCLES_ON_CLOSED || (await pending()) === 0,
    );
  } finally {
    await relay.close();
  }
  const rows = await db.query<{ id: string; status: string; retry_count: number; last_error: string | null }>(
    `SELECT id::text AS id, status, retry_count, last_error FROM outbox_events WHERE id::text = ANY($1) ORDER BY seq`,
    [ids],
  );
  return { rows, cyclesAfterClose: [...cycles] };
}

/**
 * What a relay on a closed publisher must leave: no event FAILED nor charged, every one not SENT
 * still PENDING with no attempt spent, and it went on claiming (CYCLES_ON_CLOSED cycles), each
 * handing back what it claimed and not sent as `unavailable`. The SENT ones must be checked against
 * the broker by the caller (only what the broker confirmed may be SENT).
 */
export function expectNothingSpent(run: ClosedPublisherRun): void {
  const notSent = run.rows.filter((row) => row.status !== 'SENT');
  expect(notSent.length).toBeGreaterThan(0);
  expect(notSent.filter((row) => row.status !== 'PENDING' || row.retry_count !== 0)).toEqual([]);
  expect(run.cyclesAfterClose.length).toBeGreaterThanOrEqual(CYCLES_ON_CLOSED);
  expect(run.cyclesAfterClose.filter((cycle) => cycle.retried > 0 || cycle.failed > 0)).toEqual([]);
}
