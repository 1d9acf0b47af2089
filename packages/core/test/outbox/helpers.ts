import {
  createRelay,
  FerryError,
  emit,
  type OutboxEventInput,
  type OutboxMessage,
  type OutboxOptions,
  type Publisher,
  type PublishOutcome,
  type Relay,
  type SqlExecutor,
} from '@ferry/core';
import pino from 'pino';
import { InMemoryPublisher, waitUntil } from '@ferry/testing';

export const silent = pino({ level: 'silent' });

/**
 * A publisher that never answers on its own: it tells `started`, then waits for its signal and
 * tells `ended` the signal's reason.
 */
export function heldPublisher(started: () => void, ended: (reason: unknown) => void): Publisher {
  return {
    publish: (_messages: readonly OutboxMessage[], signal?: AbortSignal) =>
      new Promise<readonly PublishOutcome[]>((resolve) => {
        started();
        signal?.addEventListener(
          'abort',
          () => {
            ended(signal.reason);
            resolve([]);
          },
          { once: true },
        );
      }),
  };
}

/** Waits for `check` to return true (the one wait-until of @ferry/testing). */
export async function waitFor(check: () => Promise<boolean> | boolean, deadlineMs = 20_000): Promise<void> {
  await waitUntil('condition', check, { timeoutMs: deadlineMs, intervalMs: 20 });
}

export function relay(db: SqlExecutor, publisher: Publisher, options: OutboxOptions = {}): Relay {
  return createRelay({ db, publisher, options, logger: silent });
}

/** Runs cycles until one claims nothing and nothing is PENDING-due or PROCESSING. */
export async function drainAll(r: Relay, db: SqlExecutor, deadlineMs = 30_000): Promise<void> {
  await waitFor(async () => {
    await r.runOnce();
    const [row] = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM outbox_events WHERE status IN ('PENDING', 'PROCESSING')`,
    );
    return row?.n === 0;
  }, deadlineMs);
}

/**
 * Emits `event`, relays until nothing is left to publish, and returns the event's row (its
 * status and last_error) and what the publisher was given.
 */
export async function emitAndRelay(
  db: SqlExecutor,
  event: OutboxEventInput,
): Promise<{ row: { status: string; last_error: string | null } | undefined; delivered: OutboxMessage[] }> {
  const { id } = await emit(db, event);
  const publisher = new InMemoryPublisher();
  const r = relay(db, publisher);
  await drainAll(r, db);
  await r.close();
  const [row] = await db.query<{ status: string; last_error: string | null }>(
    `SELECT status, last_error FROM outbox_events WHERE id = $1::uuid`,
    [id],
  );
  return { row, delivered: [...publisher.delivered] };
}

export async function statusOf(db: SqlExecutor, id: string): Promise<Record<string, unknown>> {
  const [row] = await db.query<Record<string, unknown>>(
    `SELECT status, retry_count, claim_count, last_error, claim_token::text AS claim_token,
       extract(epoch FROM next_attempt_at - updated_at)::float8 * 1000 AS gap_ms
     FROM outbox_events WHERE id = $1::uuid`,
    [id],
  );
  return row ?? {};
}

/** Makes every lease expired now (database clock), as if the relay holding it had died. */
export async function expireLeases(db: SqlExecutor): Promise<void> {
  await db.execute(
    `UPDATE outbox_events SET lease_expires_at = now() - interval '1 second' WHERE status = 'PROCESSING'`,
  );
}

/** `db`, except that every statement holding `marker` fails as a lost connection does. */
export function failingStatements(
  db: SqlExecutor,
  marker: string,
  onFail: () => void = () => undefined,
): SqlExecutor {
  const refuse = (text: string): void => {
    if (!text.includes(marker)) return;
    onFail();
    throw new FerryError('FERRY_DATABASE_UNAVAILABLE', 'Connection terminated unexpectedly');
  };
  return {
    inTransaction: db.inTransaction,
    query: async (text, values, options) => {
      refuse(text);
      return db.query(text, values, options);
    },
    execute: async (text, values, options) => {
      refuse(text);
      return db.execute(text, values, options);
    },
    transaction: (work, options) => db.transaction(work, options),
  };
}

/**
 * A relay whose circuit breaker reads a clock the test moves: `advance()` lets an open period pass
 * at once, so a test counts relay cycles, not seconds.
 */
export function clockedRelay(
  db: SqlExecutor,
  publisher: Publisher,
  options: OutboxOptions = {},
): { relay: Relay; advance: () => void } {
  let now = 1_000_000;
  const relay = createRelay({ db, publisher, logger: silent, clock: () => now, options });
  return {
    relay,
    advance: () => {
      now += relay.options.circuit.maxOpenMs + 1;
    },
  };
}

/**
 * Runs relay cycles (an open circuit's period passed at once by `advance`) until `publisher`
 * delivered event `id`: the cycle it went out in, or Infinity if not within `max` cycles.
 */
export async function cyclesUntilDelivered(
  relay: Relay,
  publisher: InMemoryPublisher,
  id: string,
  advance: () => void,
  max: number,
): Promise<number> {
  for (let cycle = 1; cycle <= max; cycle += 1) {
    if (relay.circuit === 'open') advance();
    await relay.runOnce();
    if (publisher.delivered.some((m) => m.id === id)) return cycle;
  }
  return Number.POSITIVE_INFINITY;
}

/** Whether every outbox row is SENT (for waitFor while a started relay drains). */
export async function allSent(db: SqlExecutor): Promise<boolean> {
  const [row] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox_events WHERE status <> 'SENT'`,
  );
  return row?.n === 0;
}

/** A published message as a byte-bound test reads it: its id, key and payload's `n`. */
export interface SentSummary {
  readonly id: string;
  readonly key: string | null;
  readonly n: number;
}

/** A publisher (publishing to an InMemoryPublisher) recording each call's messages as SentSummary. */
export function summarizing(): { publisher: Publisher; calls: SentSummary[][] } {
  const inner = new InMemoryPublisher();
  const calls: SentSummary[][] = [];
  const publisher: Publisher = {
    publish: (messages, signal) => {
      calls.push(messages.map((m) => ({ id: m.id, key: m.orderingKey, n: (m.payload as { n: number }).n })));
      return inner.publish(messages, signal);
    },
  };
  return { publisher, calls };
}

/** Each outbox row's payload text as a claim returns it (PostgreSQL's jsonb text), in bytes. */
export async function payloadTextBytes(db: SqlExecutor): Promise<Map<string, number>> {
  const rows = await db.query<{ id: string; bytes: number }>(
    `SELECT id::text AS id, octet_length(payload::text) AS bytes FROM outbox_events`,
  );
  return new Map(rows.map((r) => [r.id, r.bytes]));
}

/**
 * Every call of more than one message carried at most `bound` bytes of payload text (`sizes`:
 * payloadTextBytes before the relay ran), the payloads' `n` were 0 to count - 1 each once, and
 * each ordering key's were sent in order.
 */
export function expectBoundedCalls(
  calls: readonly (readonly SentSummary[])[],
  sizes: ReadonlyMap<string, number>,
  bound: number,
  count: number,
): void {
  for (const call of calls) {
    const carried = call.reduce((sum, m) => sum + (sizes.get(m.id) ?? Infinity), 0);
    expect(call.length === 1 || carried <= bound).toBe(true);
  }
  const sent = calls.flat();
  expect(sent.map((m) => m.n).sort((x, y) => x - y)).toEqual([...Array(count).keys()]);
  for (const key of new Set(sent.flatMap((m) => (m.key === null ? [] : [m.key])))) {
    const order = sent.filter((m) => m.key === key).map((m) => m.n);
    expect(order).toEqual([...order].sort((x, y) => x - y));
  }
}
