/**
 * Review 124: an outbox observer that re-enters the relay from inside an event: it calls the
 * relay's close() synchronously in the callback (claimed, sent, retry-scheduled, cycle), with the
 * relay's loop running on PostgreSQL. Expected: close() settles, no unhandled rejection, and every
 * event is published exactly once in the end (a claim close() interrupted is released or
 * recovered, never published twice by this relay, never lost).
 */
import { createRelay, emit, type OutboxEvent } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { outcomeWithin } from '../../../test-support/deadlines';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';
import { drainAll, silent, waitFor } from './outbox/helpers';

failOnUnhandledRejections();

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const EVENTS = 12;

test.each(['claimed', 'sent', 'retry-scheduled', 'cycle'] as const)(
  'close() inside %s settles; every event published exactly once in the end',
  async (trigger) => {
    await t.db.execute('DELETE FROM outbox_events');
    const ids: string[] = [];
    for (let i = 0; i < EVENTS; i += 1)
      ids.push((await emit(t.db, { type: 'r124.reenter', payload: { i } })).id);
    // The first attempt of every third event fails (a retry), so that retry-scheduled comes.
    const tried = new Set<string>();
    const publisher = new InMemoryPublisher({
      decide: (message) => {
        const first = !tried.has(message.id);
        tried.add(message.id);
        return first && ids.indexOf(message.id) % 3 === 0 ? { retryable: 'once' } : 'sent';
      },
    });
    const seen: OutboxEvent['type'][] = [];
    let closing: Promise<void> | undefined;
    const relay = createRelay({
      db: t.db,
      publisher,
      logger: silent,
      options: { batchSize: 4, pollInterval: 50, retry: { initialDelay: 1 } },
      observer: (event) => {
        seen.push(event.type);
        if (event.type === trigger && closing === undefined) closing = relay.close();
      },
    });
    relay.start();
    await waitFor(() => closing !== undefined);
    expect(await outcomeWithin(closing!, 30_000)).toEqual({ value: undefined });
    expect(relay.state).toBe('closed');

    // Whatever the closed relay left (a claim released, rows not claimed yet) the next one sends.
    const next = createRelay({
      db: t.db,
      publisher,
      logger: silent,
      options: { retry: { initialDelay: 1 } },
    });
    await t.db.execute(`UPDATE outbox_events SET next_attempt_at = now() WHERE status = 'PENDING'`);
    await drainAll(next, t.db);
    await next.close();
    const [row] = await t.db.query<{ sent: number }>(
      `SELECT count(*)::int AS sent FROM outbox_events WHERE status = 'SENT'`,
    );
    expect(row?.sent).toBe(EVENTS);
    expect([...publisher.deliveryCounts().values()].every((n) => n === 1)).toBe(true);
    expect(publisher.deliveryCounts().size).toBe(EVENTS);
  },
);
