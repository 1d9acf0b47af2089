import { randomUUID } from 'node:crypto';
import { emitMany, fromPrisma, type OutboxEventInput, type OutboxMessage, type Relay } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../test-support/database';

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

/** A fresh database holding the outbox backlog of a relay scenario. */
export class OutboxBench {
  private constructor(readonly database: TestDatabase) {}

  static async open(): Promise<OutboxBench> {
    return new OutboxBench(await createTestDatabase());
  }

  get db() {
    return fromPrisma(this.database.prisma);
  }

  /** Empties the outbox, then emits `n` PENDING events in one transaction (emitMany); not timed. */
  async backlog(n: number, destination: string): Promise<void> {
    await this.database.prisma.$executeRawUnsafe('TRUNCATE outbox_events');
    const events: OutboxEventInput[] = Array.from({ length: n }, (_, i) => ({
      type: EVENT_TYPE,
      payload: payload(i),
      destination,
    }));
    await this.database.prisma.$transaction(async (tx) => {
      await emitMany(tx, events);
    });
  }

  async countByStatus(status: 'PENDING' | 'PROCESSING' | 'SENT' | 'FAILED'): Promise<number> {
    const [row] = await this.database.prisma.$queryRawUnsafe<{ n: number }[]>(
      'SELECT count(*)::int AS n FROM outbox_events WHERE status = $1',
      status,
    );
    return row?.n ?? 0;
  }

  /** True when all `n` events are SENT and none is left in any other state. */
  async allSent(n: number): Promise<boolean> {
    const [row] = await this.database.prisma.$queryRawUnsafe<{ sent: number; total: number }[]>(
      "SELECT count(*) FILTER (WHERE status = 'SENT')::int AS sent, count(*)::int AS total FROM outbox_events",
    );
    return row?.sent === n && row.total === n;
  }

  async close(): Promise<void> {
    await this.database.drop();
  }
}

/**
 * Runs `relay.runOnce()` back to back until the backlog is gone: a cycle that claims nothing
 * ends the loop once no row is PENDING or PROCESSING (another relay may hold the last batch).
 * Returns the events this relay reported sent.
 */
export async function drainRelay(relay: Relay, bench: OutboxBench): Promise<number> {
  let sent = 0;
  for (;;) {
    const cycle = await relay.runOnce();
    sent += cycle.sent;
    if (cycle.failed > 0 || cycle.retried > 0)
      throw new Error(`relay reported ${cycle.failed} failed and ${cycle.retried} retried events`);
    if (cycle.claimed > 0) continue;
    const open = (await bench.countByStatus('PENDING')) + (await bench.countByStatus('PROCESSING'));
    if (open === 0) return sent;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
