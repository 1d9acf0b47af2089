/**
 * Hostile orders of lifecycle calls on the relay, the inbox worker and their LISTEN wake-ups:
 * every call either works or fails with a typed FerryError, nothing hangs, nothing is left
 * running after close() resolved (no connection of the test database, no rejection nobody
 * handles), and no accepted or emitted row is harmed.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { createRelay, emitMany, FerryError, type Publisher, type Relay } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import fc from 'fast-check';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';
import { latch, makeInbox, message, receiptRow, waitFor } from './inbox/helpers';
import { silent, statusOf } from './outbox/helpers';

let t: TestDatabase;
failOnUnhandledRejections();
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});
beforeEach(async () => {
  await t.db.execute('DELETE FROM outbox_events');
  await t.db.execute('DELETE FROM ferry_inbox_receipts');
});

/** Connections to the test database other than the Prisma pool's (LISTEN connections). */
async function listenConnections(): Promise<number> {
  const [row] = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND query ILIKE 'LISTEN%'`,
  );
  return row?.n ?? 0;
}

/** A TCP server that accepts connections and never answers: a PostgreSQL that hangs mid-connect. */
async function silentServer(): Promise<{ url: string; open: () => number; stop: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.resume(); // reads (and drops) what the client sends, so its FIN is seen
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `postgresql://postgres@127.0.0.1:${address.port}/test`,
    open: () => sockets.size,
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Resolves once `work` settled (with either outcome); `settled()` says whether it has. */
function watch(work: Promise<unknown>): { settled: () => boolean; done: Promise<unknown> } {
  let settled = false;
  const done = work.then(
    (value) => {
      settled = true;
      return value;
    },
    (error: unknown) => {
      settled = true;
      return error;
    },
  );
  return { settled: () => settled, done };
}

function gatedPublisher(): { publisher: InMemoryPublisher; release: () => void } {
  const gate = latch();
  const publisher = new InMemoryPublisher({
    decide: async () => {
      await gate.promise;
      return 'sent' as const;
    },
  });
  return { publisher, release: gate.open };
}

function makeRelay(publisher: Publisher, options: Parameters<typeof createRelay>[0]['options'] = {}): Relay {
  return createRelay({ db: t.db, publisher, logger: silent, options: { pollInterval: 20, ...options } });
}

describe('relay: any order of start, runOnce and close', () => {
  it('close() waits for a runOnce() whose publish is in flight, and the row it publishes is SENT', async () => {
    const { ids } = await emitMany(t.db, [{ type: 'order.placed', payload: { n: 1 } }]);
    const { publisher, release } = gatedPublisher();
    const r = makeRelay(publisher, { shutdownTimeout: 10_000 });
    const run = watch(r.runOnce());
    await waitFor('the publish to start', async () => publisher.attempts.length === 1);
    const closed = r.close();
    setTimeout(release, 100);
    await closed;
    expect(run.settled()).toBe(true);
    expect(await run.done).toMatchObject({ claimed: 1, sent: 1 });
    expect(await statusOf(t.db, ids[0]!)).toMatchObject({ status: 'SENT' });
    expect(r.state).toBe('closed');
  });

  it('close() bounds a runOnce() whose publisher never returns: runOnce settles, the row is given up until its lease ends', async () => {
    const { ids } = await emitMany(t.db, [{ type: 'order.placed', payload: { n: 1 } }]);
    let started = false;
    const never: Publisher = {
      publish: () => {
        started = true;
        return new Promise(() => undefined);
      },
    };
    const r = makeRelay(never, { shutdownTimeout: 100 });
    const run = watch(r.runOnce());
    await waitFor('the publish to start', async () => started);
    await r.close();
    await waitFor('runOnce to settle', async () => run.settled());
    expect(await run.done).toMatchObject({ claimed: 1, sent: 0, lost: 1 });
    expect(await statusOf(t.db, ids[0]!)).toMatchObject({ status: 'PENDING', retry_count: 0 });
  });

  it('runOnce() during and after close() fails FERRY_CLOSED; start() after close() fails FERRY_CLOSED', async () => {
    const { publisher, release } = gatedPublisher();
    await emitMany(t.db, [{ type: 'order.placed', payload: { n: 1 } }]);
    const r = makeRelay(publisher, { shutdownTimeout: 10_000 });
    const first = r.runOnce();
    await waitFor('the publish to start', async () => publisher.attempts.length === 1);
    const closed = r.close();
    await expect(r.runOnce()).rejects.toMatchObject({ code: 'FERRY_CLOSED' });
    release();
    await closed;
    await first;
    await expect(r.runOnce()).rejects.toMatchObject({ code: 'FERRY_CLOSED' });
    expect(() => r.start()).toThrow(FerryError);
    expect(() => r.start()).toThrow(expect.objectContaining({ code: 'FERRY_CLOSED' }));
    await expect(r.close()).resolves.toBeUndefined();
  });

  it('publishes every row exactly once whatever the order of start, runOnce and close calls (property)', async () => {
    type Step = 'start' | 'runOnce' | 'close';
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom<Step>('start', 'runOnce', 'close'), { maxLength: 6 }),
        async (steps) => {
          await t.db.execute('DELETE FROM outbox_events');
          const { ids } = await emitMany(
            t.db,
            Array.from({ length: 3 }, (_, n) => ({ type: 'order.placed', payload: { n } })),
          );
          const publisher = new InMemoryPublisher();
          const r = makeRelay(publisher, { shutdownTimeout: 5_000 });
          const calls: Array<Promise<unknown>> = [];
          for (const step of steps) {
            if (step === 'close') calls.push(r.close());
            else if (step === 'runOnce')
              calls.push(r.runOnce().catch((error: unknown) => assertClosed(error)));
            else
              calls.push(
                Promise.resolve()
                  .then(() => r.start())
                  .catch((error: unknown) => assertClosed(error)),
              );
          }
          await Promise.all(calls);
          // Whatever happened, a fresh relay finishes the work; nothing was published twice.
          await r.close();
          const rest = makeRelay(publisher);
          rest.start();
          await waitFor('every row SENT', async () => {
            const statuses = await Promise.all(ids.map((id) => statusOf(t.db, id)));
            return statuses.every((row) => row.status === 'SENT');
          });
          await rest.close();
          const published = publisher.delivered.map((m) => m.id).sort();
          expect(published).toEqual([...ids].sort());
        },
      ),
      { numRuns: 12 },
    );
  }, 60_000);
});

describe('relay: emit during close()', () => {
  it('a row emitted while the relay closes stays PENDING, untouched, and the next relay sends it once', async () => {
    const { publisher, release } = gatedPublisher();
    await emitMany(t.db, [{ type: 'order.placed', payload: { n: 0 } }]);
    const r = makeRelay(publisher, { shutdownTimeout: 10_000 });
    r.start();
    await waitFor('the first publish to start', async () => publisher.attempts.length === 1);
    const closing = r.close();
    const { ids } = await emitMany(t.db, [{ type: 'order.placed', payload: { n: 1 } }]);
    release();
    await closing;
    expect(await statusOf(t.db, ids[0]!)).toMatchObject({
      status: 'PENDING',
      retry_count: 0,
      claim_count: 0,
    });
    const next = makeRelay(publisher);
    expect(await next.runOnce()).toMatchObject({ claimed: 1, sent: 1 });
    await next.close();
    expect(publisher.delivered.filter((m) => m.id === ids[0])).toHaveLength(1);
  });
});

function assertClosed(error: unknown): void {
  if (!(error instanceof FerryError) || error.code !== 'FERRY_CLOSED') throw error;
}

describe('LISTEN wake-ups closed while connecting', () => {
  it('relay close() during a LISTEN connect that hangs leaves no connection open', async () => {
    const server = await silentServer();
    try {
      const r = createRelay({
        db: t.db,
        publisher: new InMemoryPublisher(),
        logger: silent,
        listenUrl: server.url,
        options: { pollInterval: 20, listen: { keepaliveTimeout: 60_000 } },
      });
      r.start();
      await waitFor('the LISTEN connect to reach the server', async () => server.open() === 1);
      await r.close();
      await waitFor('the LISTEN socket to close', async () => server.open() === 0, 5_000);
    } finally {
      await server.stop();
    }
  });

  it('worker close() during a LISTEN connect that hangs leaves no connection open', async () => {
    const server = await silentServer();
    try {
      const inbox = makeInbox(t.prisma, { worker: { listenUrl: server.url } });
      inbox.start();
      await waitFor('the LISTEN connect to reach the server', async () => server.open() === 1);
      await inbox.close();
      await waitFor('the LISTEN socket to close', async () => server.open() === 0, 5_000);
    } finally {
      await server.stop();
    }
  });

  it('relay and worker close() while their LISTEN connection waits to reconnect leave none, and reconnect no more', async () => {
    const listen = { reconnectInitialDelay: 60_000, reconnectMaxDelay: 60_000 };
    const r = createRelay({
      db: t.db,
      publisher: new InMemoryPublisher(),
      logger: silent,
      listenUrl: t.url,
      options: { pollInterval: 20, listen },
    });
    const inbox = makeInbox(t.prisma, { worker: { listenUrl: t.url } });
    r.start();
    inbox.start();
    await waitFor('both LISTEN connections', async () => (await listenConnections()) === 2);
    await t.db.execute(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE datname = current_database() AND query ILIKE 'LISTEN%'`,
    );
    await waitFor('both listeners to notice', async () => !r.listener?.connected);
    await Promise.all([r.close(), inbox.close()]);
    expect(await listenConnections()).toBe(0);
    expect(r.listener?.connects).toBe(1);
  });

  it('relay and worker close() right after start() leave no LISTEN connection on the database', async () => {
    for (let i = 0; i < 5; i += 1) {
      const r = createRelay({
        db: t.db,
        publisher: new InMemoryPublisher(),
        logger: silent,
        listenUrl: t.url,
      });
      const inbox = makeInbox(t.prisma, { worker: { listenUrl: t.url } });
      r.start();
      inbox.start();
      await Promise.all([r.close(), inbox.close()]);
      expect(await listenConnections()).toBe(0);
    }
  });
});

describe('inbox worker: any order of initialize, start, runOnce and close', () => {
  it('start(), runOnce() and initialize() after close() fail FERRY_CLOSED; close() twice concurrently resolves both', async () => {
    const inbox = makeInbox(t.prisma, {
      worker: { enabled: true },
      handlers: { orders: async () => undefined },
    });
    await inbox.initialize();
    const [a, b] = [inbox.close(), inbox.close()];
    await expect(Promise.all([a, b])).resolves.toEqual([undefined, undefined]);
    expect(() => inbox.start()).toThrow(expect.objectContaining({ code: 'FERRY_CLOSED' }));
    await expect(inbox.runOnce()).rejects.toMatchObject({ code: 'FERRY_CLOSED' });
    await expect(inbox.initialize()).rejects.toMatchObject({ code: 'FERRY_CLOSED' });
    expect(inbox.state).toBe('closed');
  });

  it('accepts after close(): the receipt is stored and no closed worker runs it', async () => {
    let ran = 0;
    const inbox = makeInbox(t.prisma, { handlers: { orders: async () => void (ran += 1) } });
    inbox.start();
    await inbox.close();
    const { record, kind } = await inbox.accept(message());
    expect(kind).toBe('accepted');
    const [many] = await inbox.acceptMany([message()]);
    expect(many).toMatchObject({ kind: 'accepted' });
    expect(await receiptRow(t, record.id)).toMatchObject({ status: 'PENDING', attempts: 0 });
    expect(ran).toBe(0);
  });

  it('accept() concurrent with close() stores the receipt once; a second worker completes it', async () => {
    const inbox = makeInbox(t.prisma, { handlers: { orders: async () => undefined } });
    inbox.start();
    const input = message();
    const [accepted] = await Promise.all([inbox.accept(input), inbox.close()]);
    const again = await inbox.accept(input);
    expect(again).toMatchObject({ kind: 'duplicate', record: { id: accepted.record.id } });
    const next = makeInbox(t.prisma, { handlers: { orders: async () => undefined } });
    expect(await next.runOnce()).toMatchObject({ completed: 1 });
    expect(await receiptRow(t, accepted.record.id)).toMatchObject({ status: 'COMPLETED', attempts: 1 });
  });

  it('close() during initialize() ends closed with no poll loop, whichever wins', async () => {
    const inbox = makeInbox(t.prisma, {
      worker: { enabled: true },
      handlers: { orders: async () => undefined },
    });
    const init = inbox.initialize().then(
      () => 'started',
      (error: unknown) => (error instanceof FerryError ? error.code : error),
    );
    await inbox.close();
    expect(['started', 'FERRY_CLOSED']).toContain(await init);
    expect(inbox.state).toBe('closed');
    const { record } = await inbox.accept(message());
    const other = makeInbox(t.prisma, { handlers: { orders: async () => undefined } });
    expect(await other.runOnce()).toMatchObject({ claimed: 1, completed: 1 });
    expect(await receiptRow(t, record.id)).toMatchObject({ status: 'COMPLETED', attempts: 1 });
  });

  it('close() bounds a runOnce() whose handler never returns and ignores its signal: runOnce settles', async () => {
    const started = latch();
    const inbox = makeInbox(t.prisma, {
      worker: { shutdownTimeoutMs: 100, transactionTimeoutMs: 1_000 },
      handlers: {
        orders: () => {
          started.open();
          return new Promise<void>(() => undefined);
        },
      },
    });
    const { record } = await inbox.accept(message());
    const run = watch(inbox.runOnce());
    await started.promise;
    await inbox.close();
    await waitFor('runOnce to settle', async () => run.settled(), 10_000);
    expect(await run.done).toMatchObject({ claimed: 1, completed: 0, unresolved: 1 });
    expect(await receiptRow(t, record.id)).toMatchObject({ status: 'PROCESSING', attempts: 1 });
  });

  it('close() of a running worker whose handler never returns resolves, runs nothing more and gives queued claims back', async () => {
    const started = latch();
    let calls = 0;
    const inbox = makeInbox(t.prisma, {
      worker: { shutdownTimeoutMs: 100, concurrency: 1 },
      handlers: {
        orders: () => {
          calls += 1;
          started.open();
          return new Promise<void>(() => undefined);
        },
      },
    });
    const { record } = await inbox.accept(message());
    inbox.start();
    await started.promise;
    const second = await inbox.accept(message());
    await inbox.close();
    expect(inbox.state).toBe('closed');
    expect(calls).toBe(1);
    expect(await receiptRow(t, record.id)).toMatchObject({ status: 'PROCESSING', attempts: 1 });
    // The receipt claimed ahead into the queue is given back with its attempt (the release may
    // end just after close(), whose whole wait the hung handler used up).
    await waitFor('the queued claim to be released', async () => {
      const row = await receiptRow(t, second.record.id);
      return row.status === 'PENDING' && row.attempts === 0;
    });
  });

  it('runOnce() concurrent with start() and a second runOnce() runs each receipt once', async () => {
    const ran: string[] = [];
    const inbox = makeInbox(t.prisma, {
      worker: { concurrency: 4 },
      handlers: { orders: async (_p, context) => void ran.push(context.receiptId) },
    });
    const ids: string[] = [];
    for (let i = 0; i < 6; i += 1) ids.push((await inbox.accept(message())).record.id);
    const runs = [inbox.runOnce(), inbox.runOnce()];
    inbox.start();
    inbox.start();
    await Promise.all(runs);
    await waitFor('every receipt COMPLETED', async () => {
      const rows = await Promise.all(ids.map((id) => receiptRow(t, id)));
      return rows.every((row) => row.status === 'COMPLETED');
    });
    await inbox.close();
    expect([...ran].sort()).toEqual([...ids].sort());
  });
});
