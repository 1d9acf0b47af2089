import { Client } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { createRelay, emit } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { silent, waitFor } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

async function sent(id: string): Promise<boolean> {
  const [row] = await t.db.query<{ status: string }>('SELECT status FROM outbox_events WHERE id = $1::uuid', [
    id,
  ]);
  return row?.status === 'SENT';
}

describe('wake-up', () => {
  it('a notification wakes a relay whose poll interval is long, also after the LISTEN connection was killed', async () => {
    const publisher = new InMemoryPublisher();
    const r = createRelay({
      db: t.db,
      publisher,
      listenUrl: t.url,
      logger: silent,
      options: { pollInterval: 600_000, listen: { reconnectInitialDelay: 20 } },
    });
    r.start();
    try {
      await waitFor(() => r.listener?.connected === true);
      const { id } = await emit(t.db, { type: 'wake', payload: {} });
      await waitFor(() => sent(id));
      const killer = listened(new Client({ connectionString: t.url }));
      await killer.connect();
      await killer.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()`,
      );
      await killer.end();
      await waitFor(() => (r.listener?.connects ?? 0) >= 2);
      const second = await emit(t.db, { type: 'wake', payload: {} });
      await waitFor(() => sent(second.id));
    } finally {
      await r.close();
    }
  });

  it('falls back to polling when notifications are lost (no LISTEN at all)', async () => {
    const publisher = new InMemoryPublisher();
    const r = createRelay({ db: t.db, publisher, logger: silent, options: { pollInterval: 50 } });
    r.start();
    try {
      // Notifications go to a channel nobody listens on: only polling can pick these up.
      const { id } = await emit(t.db, { type: 'poll', payload: {} });
      await waitFor(() => sent(id));
    } finally {
      await r.close();
    }
  });

  it('a burst of notifications during a publish coalesces into one extra poll', async () => {
    let release: (() => void) | undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const publisher = new InMemoryPublisher({
      decide: async () => {
        await gate;
        return 'sent' as const;
      },
    });
    const r = createRelay({
      db: t.db,
      publisher,
      listenUrl: t.url,
      logger: silent,
      options: { pollInterval: 600_000 },
    });
    r.start();
    try {
      await waitFor(() => r.listener?.connected === true && r.idle);
      const { id } = await emit(t.db, { type: 'burst', payload: {} });
      await waitFor(() => publisher.attempts.length === 1);
      const cycleInFlight = r.cycles;
      const base = r.listener?.notifications ?? 0;
      const notifier = listened(new Client({ connectionString: t.url }));
      await notifier.connect();
      for (let i = 0; i < 100; i += 1)
        await notifier.query(`SELECT pg_notify('ferry_outbox', $1)`, [String(i)]);
      await notifier.end();
      await waitFor(() => (r.listener?.notifications ?? 0) >= base + 100);
      release?.();
      await waitFor(async () => (await sent(id)) && r.idle && r.cycles > cycleInFlight);
      expect(r.cycles).toBe(cycleInFlight + 1);
    } finally {
      await r.close();
    }
  });
});
