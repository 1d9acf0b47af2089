/**
 * Review 96: a relay paused past its lease while another takes over. Its late completion is
 * refused by the fence and reported as lease-lost; no row is marked by both relays.
 */
import { execFileSync } from 'node:child_process';
import {
  createRelay,
  emit,
  type OutboxEvent,
  type Publisher,
  type PublishOutcome,
  type SqlExecutor,
} from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { failingStatements, silent, waitFor } from './outbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});
beforeEach(async () => {
  await t.db.execute('DELETE FROM outbox_events');
});

const lease = { duration: 1_000, heartbeatInterval: 200 };

/** Counts the completion statements `db` runs. */
function counting(db: SqlExecutor): { db: SqlExecutor; completions: () => number } {
  let n = 0;
  return {
    completions: () => n,
    db: {
      inTransaction: db.inTransaction,
      transaction: (work, options) => db.transaction(work, options),
      execute: (text, values, options) => db.execute(text, values, options),
      query: (text, values, options) => {
        if (text.includes('failures AS')) n += 1;
        return db.query(text, values, options);
      },
    },
  };
}

async function rows(): Promise<{ status: string; claim_token: string | null }[]> {
  return t.db.query(`SELECT status, claim_token::text AS claim_token FROM outbox_events ORDER BY id`);
}

describe('a relay paused past its lease', () => {
  it('blocking the event loop while another relay takes over: its completion is fenced and reported', async () => {
    for (let n = 0; n < 3; n += 1) await emit(t.db, { type: 'p', payload: { n }, orderingKey: 'k' });
    const events: OutboxEvent[] = [];
    const takenBy = '00000000-0000-4000-8000-000000000096';
    const blocking: Publisher = {
      system: 'memory',
      publish: async (messages) => {
        // Blocks the event loop past the lease; meanwhile another relay recovered and claimed the
        // rows (a psql session: nothing in this process can run).
        const until = Date.now() + lease.duration + 300;
        while (Date.now() < until) {
          /* busy */
        }
        execFileSync('psql', [
          t.url,
          '-qc',
          `UPDATE outbox_events SET claim_token = '${takenBy}', lease_expires_at = now() + interval '1 minute' WHERE status = 'PROCESSING'`,
        ]);
        return messages.map((m): PublishOutcome => ({ id: m.id, status: 'sent' }));
      },
    };
    const a = counting(t.db);
    const relayA = createRelay({
      db: a.db,
      publisher: blocking,
      logger: silent,
      options: { lease, batchSize: 10 },
      observer: (event) => void events.push(event),
    });
    const result = await relayA.runOnce();
    await relayA.close();
    expect(result).toMatchObject({ claimed: 1, sent: 0, lost: 1 });
    expect(events.filter((e) => e.type === 'lease-lost')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'sent')).toHaveLength(0);
    expect((await rows()).filter((r) => r.status === 'PROCESSING')).toEqual([
      { status: 'PROCESSING', claim_token: takenBy },
    ]);
  });

  it('awaiting past its lease while its renewals fail: the outcome is discarded, the other relay sends', async () => {
    for (let n = 0; n < 3; n += 1) await emit(t.db, { type: 'p', payload: { n }, orderingKey: 'k' });
    const events: OutboxEvent[] = [];
    let calls = 0;
    const slow: Publisher = {
      system: 'memory',
      publish: async (messages) => {
        calls += 1;
        // Ignores its signal and answers after the lease.
        await new Promise((resolve) => setTimeout(resolve, lease.duration + 500));
        return messages.map((m): PublishOutcome => ({ id: m.id, status: 'sent' }));
      },
    };
    const a = counting(failingStatements(t.db, 'SET lease_expires_at = now() +'));
    const relayA = createRelay({
      db: a.db,
      publisher: slow,
      logger: silent,
      options: { lease, batchSize: 10 },
      observer: (event) => void events.push(event),
    });
    const published = new InMemoryPublisher();
    const b = counting(t.db);
    const relayB = createRelay({ db: b.db, publisher: published, logger: silent, options: { lease } });
    const cycleA = relayA.runOnce();
    await waitFor(() => calls === 1);
    await waitFor(async () => {
      await relayB.runOnce();
      return (await rows()).every((r) => r.status === 'SENT');
    });
    const result = await cycleA;
    await Promise.all([relayA.close(), relayB.close()]);
    expect(result).toMatchObject({ claimed: 1, sent: 0, lost: 1 });
    expect(a.completions()).toBe(0);
    expect(events.filter((e) => e.type === 'lease-lost')).toHaveLength(1);
    expect(published.delivered).toHaveLength(3);
  });
});
