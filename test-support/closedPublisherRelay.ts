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
  type PublishOutcome,
  type Publisher,
} from '@ferry/core';
import { isClosedAnswer } from '@ferry/core/transport';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from './database';

export interface ClosedPublisherRun {
  /** Every event's row after the relay closed, in emit order. */
  readonly rows: readonly { id: string; status: string; retry_count: number; last_error: string | null }[];
  /** The cycles that claimed rows and ended after the publisher's close() resolved. */
  readonly cyclesAfterClose: readonly Extract<OutboxEvent, { type: 'cycle' }>[];
  /** What the relay's publish call in flight when the publisher closed answered. */
  readonly inFlightAtClose: readonly PublishOutcome[];
  /** The ids of the events the broker holds once the relay closed (the caller's `taken`). */
  readonly taken: ReadonlySet<string>;
}

/** How many cycles that claimed rows the relay runs on the closed publisher. */
export const CYCLES_ON_CLOSED = 4;

/** How many events the relay has to publish when the publisher closes under it. */
const EVENTS = 200;

/** The deadline of each wait of a run (a liveness bound, not a timing threshold). */
const RUN_WITHIN_MS = 30_000;

/**
 * In a database of its own (dropped after), emits EVENTS events to `destination` (maxRetries 2: two charged attempts make an event FAILED),
 * starts the relay (batches of 20, retries due at once, a circuit that never opens, so that every
 * cycle claims and publishes again), closes the publisher from within the relay's next publish call
 * once the relay confirmed a first batch (closingInFlight: that call in flight at close()), then lets the relay run CYCLES_ON_CLOSED cycles that claim rows on
 * the closed publisher (or until no row is pending: every one charged and FAILED, as on main before
 * the closed publisher answered `unavailable`), closes it and asks the broker what it took
 * (`taken`: the message ids it holds).
 */
export async function runRelayOnClosedPublisher(options: {
  readonly publisher: Publisher & { close(): Promise<void> };
  readonly destination: string;
  readonly taken: () => Promise<Iterable<string | undefined>>;
}): Promise<ClosedPublisherRun> {
  const database = await createTestDatabase();
  try {
    return await runOn(database.db, options);
  } finally {
    await options.publisher.close();
    await database.drop();
  }
}

async function runOn(
  db: TestDatabase['db'],
  options: Parameters<typeof runRelayOnClosedPublisher>[0],
): Promise<ClosedPublisherRun> {
  const { publisher } = options;
  const events: OutboxEventInput[] = Array.from({ length: EVENTS }, (_, n) => ({
    type: 'order.placed',
    destination: options.destination,
    payload: { n },
    maxRetries: 2,
  }));
  const { ids } = await emitMany(db, events);
  const cycles: Extract<OutboxEvent, { type: 'cycle' }>[] = [];
  let closedAt: number | null = null;
  const closing = closingInFlight(publisher);
  const relay = createRelay({
    db,
    publisher: closing.publisher,
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
  const deadline = Date.now() + RUN_WITHIN_MS;
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
    await waitUntil('the relay to confirm a first batch', async () => (await pending()) < EVENTS);
    closing.arm();
    await waitUntil('the publisher closed during a publish call', async () => closing.closed());
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
  const taken = new Set<string>();
  for (const id of await options.taken()) if (id !== undefined) taken.add(id);
  return { rows, cyclesAfterClose: [...cycles], inFlightAtClose: await closing.inFlight(), taken };
}

/**
 * `publisher` as the relay sees it (a Proxy: its system, naming and answerWithinMs as they are),
 * except that once armed, its next publish() call closes it one turn of the event loop after the
 * call started: that call is in flight at close() (past its first waits: a connect, a channel, a
 * send on the wire).
 */
function closingInFlight(publisher: Publisher & { close(): Promise<void> }): {
  readonly publisher: Publisher;
  arm(): void;
  /** True once close() resolved; throws what close() rejected with. */
  closed(): boolean;
  /** What the call in flight at close() answered. */
  inFlight(): Promise<readonly PublishOutcome[]>;
} {
  let armed = false;
  let call: Promise<readonly PublishOutcome[]> | null = null;
  let closed: { readonly error: unknown } | null = null;
  const proxy = new Proxy(publisher, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (property === 'publish')
        return (messages: Parameters<Publisher['publish']>[0], signal: AbortSignal) => {
          const answer = target.publish(messages, signal);
          if (armed) {
            armed = false;
            call = answer;
            setImmediate(() => {
              target.close().then(
                () => void (closed = { error: null }),
                (error: unknown) => void (closed = { error }),
              );
            });
          }
          return answer;
        };
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return {
    publisher: proxy,
    arm: () => void (armed = true),
    closed: () => {
      if (closed?.error) throw closed.error;
      return closed !== null;
    },
    inFlight: async () => (call === null ? [] : await call),
  };
}

/**
 * What a relay on a closed publisher must leave: no event FAILED nor charged, every one not SENT
 * still PENDING with no attempt spent, and it went on claiming (CYCLES_ON_CLOSED cycles), each
 * handing back what it claimed and not sent as `unavailable`; and only what the broker took is SENT.
 */
export function expectNothingSpent(run: ClosedPublisherRun): void {
  const notSent = run.rows.filter((row) => row.status !== 'SENT');
  expect(notSent.length).toBeGreaterThan(0);
  expect(notSent.filter((row) => row.status !== 'PENDING' || row.retry_count !== 0)).toEqual([]);
  expect(run.cyclesAfterClose.length).toBeGreaterThanOrEqual(CYCLES_ON_CLOSED);
  expect(run.cyclesAfterClose.filter((cycle) => cycle.retried > 0 || cycle.failed > 0)).toEqual([]);
  // The call in flight at close(): what close() kept from being confirmed is `unavailable`.
  expect(run.inFlightAtClose.length).toBeGreaterThan(0);
  expect(run.inFlightAtClose.filter((o) => o.status !== 'sent' && o.status !== 'unavailable')).toEqual([]);
  // Each says so (isClosedAnswer): a relay whose cycle had only such outcomes names its publisher
  // closed, not the broker, when its circuit opens.
  expect(run.inFlightAtClose.filter((o) => o.status === 'unavailable' && !isClosedAnswer(o.error))).toEqual(
    [],
  );
  const sent = run.rows.filter((row) => row.status === 'SENT').map((row) => row.id);
  expect(sent.filter((id) => !run.taken.has(id))).toEqual([]);
}
