import { Client } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { pgTransactions } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { latch, makeInbox, message, receiptRow, recordingPool, waitFor } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

describe('inbox worker wake-up on acceptance (worker.listenUrl)', () => {
  it('runs a receipt accepted while the worker is idle without waiting for its poll interval', async () => {
    const ran: string[] = [];
    const inbox = makeInbox(t.prisma, {
      // An hour: only a notification (or the connect wake-up) can make the worker poll again.
      worker: { pollIntervalMs: 3_600_000, listenUrl: t.url },
      handlers: { woken: async (_p, context) => void ran.push(context.receiptId) },
    });
    inbox.start();
    try {
      // The first receipt may be found by the poll that follows the LISTEN connect; the second
      // can only be found because its acceptance notified the idle worker.
      for (let i = 0; i < 2; i += 1) {
        const { record } = await inbox.accept(message({ consumer: 'woken' }));
        await waitFor(`receipt ${i + 1} to complete`, async () => {
          const row = await receiptRow(t, record.id);
          return row.status === 'COMPLETED';
        });
        expect(ran).toContain(record.id);
      }
    } finally {
      await inbox.close();
    }
  }, 60_000);

  it('a woken worker claims first: the sweep of exhausted claims runs beside the handler, not before the claim', async () => {
    // The statements of every pooled connection, in the order they were sent.
    const { pool, sent } = recordingPool(t);
    const kind = (text: string) =>
      /^WITH fresh AS/.test(text)
        ? 'claim'
        : /SET status = 'DEAD'.*attempts >= \$3::int/.test(text)
          ? 'sweep'
          : /^BEGIN/.test(text)
            ? 'begin'
            : undefined;
    const ran: string[] = [];
    const inbox = makeInbox(pgTransactions(pool), {
      worker: { pollIntervalMs: 3_600_000, listenUrl: t.url },
      handlers: { first: async (_p, context) => void ran.push(context.receiptId) },
    });
    inbox.start();
    try {
      // Wait until the worker idles (its first polls done), then wake it with one receipt.
      await waitFor('the first idle poll, its claim and its sweep', async () => {
        const kinds = sent.map(kind);
        return kinds.includes('claim') && kinds.includes('sweep');
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const from = sent.length;
      const { record } = await inbox.accept(message({ consumer: 'first' }));
      await waitFor('the woken receipt to run', async () => ran.includes(record.id));
      await waitFor('the sweep', async () => sent.slice(from).some((text) => kind(text) === 'sweep'));
      const order = sent
        .slice(from)
        .map(kind)
        .filter((k) => k !== undefined);
      // On a wake-up an acceptance is waiting: the claim goes out first, and the sweep (a
      // housekeeping query on another connection) runs while the handler's transaction begins.
      expect(order[0]).toBe('claim');
      expect(order).toContain('begin');
    } finally {
      await inbox.close();
      await pool.end();
    }
  }, 60_000);

  it('keeps a notification that came while the queue was full: the worker claims it once its queue drains', async () => {
    const gate = latch();
    const ran: string[] = [];
    const inbox = makeInbox(t.prisma, {
      // One lane, prefetch 4 (refill mark 1); an hour between polls: only wake-ups make it claim.
      worker: { concurrency: 1, prefetch: 4, pollIntervalMs: 3_600_000, listenUrl: t.url },
      handlers: {
        full: async (_p, context) => {
          ran.push(context.receiptId);
          await gate.promise;
        },
      },
    });
    // The worker's LISTEN connection (internal): how many notifications it has heard.
    const listener = () =>
      (inbox as unknown as { worker: { listener: { connects: number; notifications: number } } }).worker
        .listener;
    const first: string[] = [];
    for (let i = 0; i < 3; i += 1) first.push((await inbox.accept(message({ consumer: 'full' }))).record.id);
    inbox.start();
    try {
      // The claim asked for 5 and got 3: one runs (held by the gate), two wait in the queue.
      await waitFor('the first handler to start and the LISTEN connection', async () => {
        return ran.length === 1 && listener().connects >= 1;
      });
      const heard = listener().notifications;
      const { record } = await inbox.accept(message({ consumer: 'full' }));
      // Heard while the queue holds more than its refill mark: nothing to claim yet.
      await waitFor('the worker to hear the acceptance', async () => listener().notifications > heard);
      gate.open();
      await waitFor('the first three to complete', async () => {
        const rows = await Promise.all(first.map((id) => receiptRow(t, id)));
        return rows.every((row) => row.status === 'COMPLETED');
      });
      await waitFor(
        'the receipt announced while the queue was full to complete',
        async () => (await receiptRow(t, record.id)).status === 'COMPLETED',
        10_000,
      );
      expect(ran).toContain(record.id);
    } finally {
      gate.open();
      await inbox.close();
    }
  }, 60_000);

  it('recovers its LISTEN connection after PostgreSQL ends it: an acceptance after the reconnect wakes the idle worker', async () => {
    const ran: string[] = [];
    const inbox = makeInbox(t.prisma, {
      worker: { pollIntervalMs: 3_600_000, listenUrl: t.url },
      handlers: { relisten: async (_p, context) => void ran.push(context.receiptId) },
    });
    const listener = () =>
      (inbox as unknown as { worker: { listener: { connects: number; connected: boolean } } }).worker
        .listener;
    inbox.start();
    try {
      await waitFor('the LISTEN connection', async () => listener().connected);
      const killed = await t.db.query<{ ended: boolean }>(
        `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
         WHERE datname = current_database() AND query = 'LISTEN "ferry_inbox"' AND pid <> pg_backend_pid()`,
      );
      expect(killed).toEqual([{ ended: true }]);
      await waitFor(
        'the LISTEN connection to come back',
        async () => listener().connects >= 2 && listener().connected,
      );
      // The reconnect's own wake-up may run a poll first; either way, this receipt is only found by
      // a notification on the new connection (or that poll, when it comes after the commit).
      const { record } = await inbox.accept(message({ consumer: 'relisten' }));
      await waitFor(
        'the receipt to complete',
        async () => (await receiptRow(t, record.id)).status === 'COMPLETED',
      );
      expect(ran).toEqual([record.id]);
    } finally {
      await inbox.close();
    }
  }, 60_000);

  it('polls at pollIntervalMs when its LISTEN connection cannot be made', async () => {
    const ran: string[] = [];
    const inbox = makeInbox(t.prisma, {
      // Nothing listens on port 1: every connect fails and the listener backs off.
      worker: { pollIntervalMs: 50, listenUrl: 'postgres://postgres@127.0.0.1:1/test' },
      handlers: { unheard: async (_p, context) => void ran.push(context.receiptId) },
    });
    const listener = () =>
      (inbox as unknown as { worker: { listener: { connects: number } } }).worker.listener;
    inbox.start();
    try {
      // The second is accepted while the worker idles: only a poll can find it.
      for (let i = 0; i < 2; i += 1) {
        const { record } = await inbox.accept(message({ consumer: 'unheard' }));
        await waitFor(`receipt ${i + 1} to complete`, async () => {
          return (await receiptRow(t, record.id)).status === 'COMPLETED';
        });
        expect(ran).toContain(record.id);
      }
      expect(listener().connects).toBe(0);
    } finally {
      await inbox.close();
    }
  }, 60_000);

  it('notifies ferry_inbox when acceptance stores a new receipt, not for a duplicate', async () => {
    const inbox = makeInbox(t.prisma, { handlers: { quiet: async () => undefined } });
    const input = message({ consumer: 'quiet' });
    const listener = listened(new Client({ connectionString: t.url }));
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (n) => heard.push(n.channel));
    try {
      await listener.query('LISTEN ferry_inbox');
      await inbox.accept(input);
      await waitFor('the acceptance notification', async () => heard.length > 0);
      expect(heard).toEqual(['ferry_inbox']);
      await inbox.accept(input); // a duplicate stores nothing
      await listener.query('SELECT 1'); // notifications sent before this answer have arrived
      expect(heard).toEqual(['ferry_inbox']);
    } finally {
      await listener.end();
      await inbox.close();
    }
  });
});
