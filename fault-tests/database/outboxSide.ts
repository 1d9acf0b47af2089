/**
 * The outbox side of the database scenarios. Every handler emits one outbox event in its own
 * transaction (`context.tx`, correlation id = the message id), and an outbox relay on the
 * application's Prisma client publishes the events to an in-memory broker that outlives every
 * database fault (the broker is not what these scenarios break). One publish can be held open
 * until the fault has happened, so the fault hits the relay with a claimed batch in flight.
 *
 * Ledger `<scenario>/outbox`: offered = distinct messages (each handled once, so each must leave
 * exactly one committed event); lost = messages without a committed event, plus SENT events the
 * broker never received; appliedTwice = messages with two committed events; stuck = events not
 * SENT after recovery; duplicatesAbsorbed = broker repeats (a publish whose SENT commit died with
 * the server is published again after the lease: at least once, never lost).
 */
import { createRelay, emit, fromPrisma, type InboxHandlerContext, type Relay } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import type { PrismaClient } from '../../generated/prisma/client';
import { emptyLedger, reconcile, type Ledger } from '../harness/ledger';
import { quietLogger } from './support';

/** Relay timings short enough for a test; the lease (2 s, like the worker's) recovers abandoned batches. */
export const RELAY_OPTIONS = {
  pollInterval: 20,
  batchSize: 10,
  errorBackoff: 50,
  shutdownTimeout: 3_000,
  lease: { duration: 2_000, heartbeatInterval: 200 },
  retry: { initialDelay: 10, maxDelay: 200 },
} as const;

/** The handler's outbox write, in the worker's transaction. */
export async function emitHandledEvent(context: InboxHandlerContext): Promise<void> {
  await emit(context.tx, {
    type: 'order.handled',
    payload: { messageId: context.messageId },
    correlationId: context.messageId,
  });
}

export class OutboxSide {
  readonly broker = new InMemoryPublisher({ decide: () => this.decide() });
  private readonly relays: Relay[] = [];
  private hold: { until: Promise<void>; reached: boolean; taken: boolean } | undefined;

  /** Holds the next message the broker is handed until `until` settles (then it is sent). */
  holdNextPublish(until: Promise<void>): { reached: () => boolean } {
    const hold = { until, reached: false, taken: false };
    this.hold = hold;
    return { reached: () => hold.reached };
  }

  private async decide(): Promise<'sent'> {
    const hold = this.hold;
    if (hold && !hold.taken) {
      hold.taken = true;
      hold.reached = true;
      await hold.until;
    }
    return 'sent';
  }

  /** Starts a relay on `prisma` (the application's client); closed by closeAll(). */
  startRelay(prisma: PrismaClient): Relay {
    const relay = createRelay({
      db: fromPrisma(prisma),
      publisher: this.broker,
      logger: quietLogger,
      options: RELAY_OPTIONS,
    });
    this.relays.push(relay);
    relay.start();
    return relay;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.relays.map((relay) => relay.close().catch(() => undefined)));
  }

  /** True once every event row is SENT. */
  async allSent(prisma: PrismaClient): Promise<boolean> {
    const [row] = await prisma.$queryRawUnsafe<{ n: number }[]>(
      "SELECT count(*)::int AS n FROM outbox_events WHERE status <> 'SENT'",
    );
    return row?.n === 0;
  }

  async ledger(prisma: PrismaClient, offeredMessageIds: Iterable<string>): Promise<Ledger> {
    const rows = await prisma.$queryRawUnsafe<{ id: string; correlation_id: string; status: string }[]>(
      'SELECT id::text AS id, correlation_id, status FROM outbox_events',
    );
    const deliveries = this.broker.deliveryCounts();
    const sentNeverDelivered = rows.filter((row) => row.status === 'SENT' && !deliveries.has(row.id)).length;
    const offered = new Set(offeredMessageIds);
    const counted = reconcile(
      offered,
      rows.map((row) => row.correlation_id),
    );
    return {
      ...emptyLedger(),
      offered: offered.size,
      accepted: rows.length,
      duplicatesAbsorbed: [...deliveries.values()].reduce((sum, n) => sum + n - 1, 0),
      ...counted,
      lost: counted.lost + sentNeverDelivered,
      stuck: rows.filter((row) => row.status !== 'SENT').length,
    };
  }
}
