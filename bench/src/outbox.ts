import { randomUUID } from 'node:crypto';
import {
  emitMany,
  fromPg,
  fromPrisma,
  type OnSent,
  type OutboxEventInput,
  type OutboxMessage,
  type OutboxObserver,
  type Relay,
} from '@ferry/core';
import { Pool } from 'pg';
import { listened } from '../../test-support/oneStatement';
import type { TestDatabase } from '../../test-support/database';
import { benchDatabase } from './env';

export const EVENT_TYPE = 'bench.order.placed';

/** The payload of the i-th benchmark event (about 120 bytes of JSON). */
export function payload(i: number): Record<string, unknown> {
  return { orderId: `order-${i}`, customerId: `customer-${i % 25}`, amountCents: 1000 + i, currency: 'EUR' };
}

/**
 * The messages a relay would hand its publisher for `n` fresh events, built in memory for the
 * raw-client baselines, so both sides put the same bytes on the wire.
 */
export function outboxMessages(n: number, destination: string): OutboxMessage[] {
  const createdAt = new Date();
  return Array.from({ length: n }, (_, i) => ({
    id: randomUUID(),
    type: EVENT_TYPE,
    payload: payload(i),
    destination,
    orderingKey: null,
    tenantId: null,
    correlationId: null,
    causationId: null,
    headers: {},
    traceparent: null,
    tracestate: null,
    attempt: 1,
    createdAt,
  }));
}

/** The executor ferry's side runs on: the test database's Prisma client (default) or `fromPg`. */
export const EXECUTOR = process.env.BENCH_EXECUTOR === 'pg' ? 'pg' : 'prisma';

/** A fresh database holding the outbox backlog of a relay scenario. */
export class OutboxBench {
  /** The node-postgres pool behind `db` when BENCH_EXECUTOR=pg (10 connections, as Prisma's). */
  private readonly pool: Pool | undefined;

  private constructor(readonly database: TestDatabase) {
    this.pool =
      EXECUTOR === 'pg' ? listened(new Pool({ connectionString: database.url, max: 10 })) : undefined;
  }

  static async open(): Promise<OutboxBench> {
    return new OutboxBench(await benchDatabase());
  }

  get db() {
    return this.pool ? fromPg(this.pool) : fromPrisma(this.database.prisma);
  }

  /** Empties the outbox, then emits `n` PENDING events in one transaction (emitMany, 10,000 a call); not timed. */
  async backlog(n: number, destination: string): Promise<void> {
    await this.database.prisma.$executeRawUnsafe('TRUNCATE outbox_events');
    const events: OutboxEventInput[] = Array.from({ length: n }, (_, i) => ({
      type: EVENT_TYPE,
      payload: payload(i),
      destination,
    }));
    // Not timed; a generous timeout, as emitting thousands of events on a loaded machine takes seconds.
    // emitMany takes at most 10,000 events a call (as acceptMany's inputs): a larger backlog in
    // calls of 10,000, one transaction all the same.
    await this.database.prisma.$transaction(
      async (tx) => {
        for (let i = 0; i < events.length; i += 10_000) await emitMany(tx, events.slice(i, i + 10_000));
      },
      { timeout: 300_000, maxWait: 60_000 },
    );
  }

  async countByStatus(status: 'PENDING' | 'PROCESSING' | 'SENT' | 'FAILED'): Promise<number> {
    const [row] = await this.database.prisma.$queryRawUnsafe<{ n: number }[]>(
      'SELECT count(*)::int AS n FROM outbox_events WHERE status = $1',
      status,
    );
    return row?.n ?? 0;
  }

  /** Events still to relay: PENDING or PROCESSING. */
  async countOpen(): Promise<number> {
    const [row] = await this.database.prisma.$queryRawUnsafe<{ n: number }[]>(
      "SELECT count(*)::int AS n FROM outbox_events WHERE status IN ('PENDING', 'PROCESSING')",
    );
    return row?.n ?? 0;
  }

  /**
   * True when all `n` events are SENT and none is left in any other state; under `onSent`
   * 'delete' (BENCH_SENT), when none is left at all.
   */
  async allSent(n: number, onSent: OnSent = 'keep'): Promise<boolean> {
    const [row] = await this.database.prisma.$queryRawUnsafe<{ sent: number; total: number }[]>(
      "SELECT count(*) FILTER (WHERE status = 'SENT')::int AS sent, count(*)::int AS total FROM outbox_events",
    );
    const kept = onSent === 'keep' ? n : 0;
    return row?.sent === kept && row.total === kept;
  }

  async close(): Promise<void> {
    await this.pool?.end();
    await this.database.drop();
  }
}

/**
 * Runs a relay the way an application does (`start()`, so pipelined cycles count) until it
 * reported `n` events sent, then closes it. `make` builds the relay with the observer counting
 * them. Throws if a retry or failure is reported, or after `deadlineMs`.
 */
export async function drainRunning(
  make: (observer: OutboxObserver) => Relay,
  n: number,
  deadlineMs = 600_000,
): Promise<number> {
  let sent = 0;
  let problem: string | undefined;
  const relay = make((event) => {
    if (event.type === 'sent') sent += 1;
    else if (event.type === 'retry-scheduled') problem ??= `retry scheduled: ${event.error}`;
    else if (event.type === 'failed') problem ??= `failed: ${event.error}`;
  });
  relay.start();
  try {
    await waitUntil(() => sent >= n || problem !== undefined, deadlineMs);
  } finally {
    await relay.close();
  }
  if (problem !== undefined) throw new Error(`relay reported: ${problem}`);
  return sent;
}

/**
 * Polls `check` every `intervalMs` (default 2 ms: an in-memory check) until it holds; throws
 * after `deadlineMs`.
 */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  deadlineMs = 600_000,
  intervalMs = 2,
): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('bench: condition not met before the deadline');
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
