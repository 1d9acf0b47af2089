import { randomUUID } from 'node:crypto';
import {
  createEmitter,
  createOutboxAdmin,
  createRelay,
  type OutboxMessage,
  type Publisher,
  type PublishOutcome,
} from '@ferry/core';
import { relayStore } from '@ferry/core/internal/testing';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { expireLeases, relay, silent, statusOf, waitFor } from './helpers';

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

/** Reports every message with `status`, remembering how many batches it saw. */
function failingPublisher(): Publisher & { calls: number } {
  return {
    calls: 0,
    async publish(messages) {
      this.calls += 1;
      return messages.map((m): PublishOutcome => ({
        id: m.id,
        status: 'retryable',
        error: 'broker said no',
      }));
    },
  };
}

/** Simulates a relay that claims and dies: the lease expires without a completion. */
async function crashOnce(): Promise<void> {
  const store = relayStore(t.db);
  const claim = await store.claim({ token: randomUUID(), limit: 10, leaseMs: 60_000, failedHead: 'block' });
  expect(claim.rows).toHaveLength(1);
  await expireLeases(t.db);
}

describe('outbox lease liveness', () => {
  it('a relay whose renewal hangs stops publishing and reporting before another relay takes the event over', async () => {
    const [id] = (await createEmitter().emitMany(t.db, [{ type: 'hang.test', payload: {} }])).ids;
    let abortedAt: number | undefined;
    const slow: Publisher = {
      // Ignores its signal and reports "sent" only after it aborted: a late outcome.
      publish: (messages, signal) =>
        new Promise((resolve) => {
          signal.addEventListener('abort', () => {
            abortedAt = Date.now();
            setTimeout(() => resolve(messages.map((m) => ({ id: m.id, status: 'sent' as const }))), 50);
          });
        }),
    };
    const seenByA = { sent: 0, leaseLost: 0 };
    let claimedByA!: () => void;
    const aClaimed = new Promise<void>((resolve) => (claimedByA = resolve));
    const a = createRelay({
      db: t.db,
      publisher: slow,
      store: { ...relayStore(t.db), renew: () => new Promise<number>(() => undefined) },
      options: { lease: { duration: 1_500, heartbeatInterval: 300 } },
      observer: (e) => {
        if (e.type === 'claimed') claimedByA();
        if (e.type === 'sent') seenByA.sent += 1;
        if (e.type === 'lease-lost') seenByA.leaseLost += 1;
      },
      logger: silent,
    });
    const cycleA = a.runOnce();
    let doneA: Awaited<typeof cycleA> | undefined;
    void cycleA.then((r) => (doneA = r));
    // B starts only once A holds the event: on a loaded machine B's first claim could come first.
    await aClaimed;

    let publishedByB: number | undefined;
    const b = relay(t.db, {
      async publish(messages: readonly OutboxMessage[]) {
        publishedByB = Date.now();
        return messages.map((m) => ({ id: m.id, status: 'sent' as const }));
      },
    });
    await waitFor(async () => (await b.runOnce()).sent === 1);
    await waitFor(() => doneA !== undefined, 5_000);

    expect(abortedAt).toBeDefined();
    expect(abortedAt!).toBeLessThan(publishedByB!);
    expect(doneA).toMatchObject({ claimed: 1, sent: 0, lost: 1 });
    expect(seenByA).toEqual({ sent: 0, leaseLost: 1 });
    expect(await statusOf(t.db, id!)).toMatchObject({ status: 'SENT', claim_count: 2, retry_count: 0 });
    await a.close();
  });

  it('poison guard: a row with maxRetries 20 that failed 10 times and then saw one crash is not FAILED', async () => {
    const emitter = createEmitter({ retry: { maxRetries: 20 } });
    const [id] = (await emitter.emitMany(t.db, [{ type: 'flaky', payload: {} }])).ids;
    const publisher = failingPublisher();
    const r = relay(t.db, publisher, { retry: { initialDelay: 0, maxDelay: 0 } });
    while (publisher.calls < 10) await r.runOnce();
    expect(await statusOf(t.db, id!)).toMatchObject({ status: 'PENDING', retry_count: 10, claim_count: 10 });
    await crashOnce();
    expect(await relayStore(t.db).recover({ limit: 10, maxClaims: 10 })).toEqual({
      requeued: 1,
      poisoned: [],
    });
    expect(await statusOf(t.db, id!)).toMatchObject({ status: 'PENDING', retry_count: 10, claim_count: 11 });
  });

  it('poison guard: a row whose lease expired maxClaims times in a row is FAILED with a true message', async () => {
    const [id] = (await createEmitter().emitMany(t.db, [{ type: 'poison', payload: {} }])).ids;
    const store = relayStore(t.db);
    for (let i = 0; i < 2; i += 1) {
      await crashOnce();
      expect(await store.recover({ limit: 10, maxClaims: 3 })).toEqual({ requeued: 1, poisoned: [] });
    }
    await crashOnce();
    const { poisoned } = await store.recover({ limit: 10, maxClaims: 3 });
    const message = 'poison guard: the lease expired 3 times in a row without a completion (limit 3)';
    expect(poisoned).toEqual([{ id, type: 'poison', retryCount: 0, error: message }]);
    expect(await statusOf(t.db, id!)).toMatchObject({
      status: 'FAILED',
      last_error: message,
      retry_count: 0,
    });
  });

  it('poison guard: a fenced completion and an operator retry each reset the count of expired claims', async () => {
    const [id] = (await createEmitter().emitMany(t.db, [{ type: 'poison', payload: {} }])).ids;
    const store = relayStore(t.db);
    const r = relay(t.db, failingPublisher(), { retry: { initialDelay: 0, maxDelay: 0 } });
    for (let i = 0; i < 2; i += 1) {
      await crashOnce();
      await store.recover({ limit: 10, maxClaims: 3 });
    }
    await waitFor(async () => (await r.runOnce()).retried === 1);
    for (let i = 0; i < 2; i += 1) {
      await crashOnce();
      expect(await store.recover({ limit: 10, maxClaims: 3 })).toMatchObject({ poisoned: [] });
    }
    await crashOnce();
    expect((await store.recover({ limit: 10, maxClaims: 3 })).poisoned).toHaveLength(1);
    expect(await createOutboxAdmin(t.db).retry(id!)).toMatchObject({ outcome: 'applied' });
    await crashOnce();
    expect(await store.recover({ limit: 10, maxClaims: 3 })).toEqual({ requeued: 1, poisoned: [] });
    expect(await statusOf(t.db, id!)).toMatchObject({ status: 'PENDING', claim_count: 7 });
  });

  it('close() does not return while the completion query is still running, even after shutdownTimeout', async () => {
    await createEmitter().emitMany(t.db, [{ type: 'close.test', payload: {} }]);
    const real = relayStore(t.db);
    let inflight = 0;
    let completing!: () => void;
    let release!: () => void;
    const completionStarted = new Promise<void>((resolve) => (completing = resolve));
    const held = new Promise<void>((resolve) => (release = resolve));
    const warnings: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) });
    const r = createRelay({
      db: t.db,
      publisher: { publish: async (ms) => ms.map((m) => ({ id: m.id, status: 'sent' as const })) },
      store: {
        ...real,
        complete: async (token, completions) => {
          inflight += 1;
          completing();
          await held;
          try {
            return await real.complete(token, completions);
          } finally {
            inflight -= 1;
          }
        },
      },
      options: { shutdownTimeout: 10, pollInterval: 20 },
      logger,
    });
    r.start();
    await completionStarted;
    let inflightWhenClosed: number | undefined;
    const closed = r.close().then(() => (inflightWhenClosed = inflight));
    await waitFor(
      () => warnings.some((w) => w.includes('shutdown timed out')) || inflightWhenClosed !== undefined,
    );
    release();
    await closed;
    expect(inflightWhenClosed).toBe(0);
    expect(r.state).toBe('closed');
    const [row] = await t.db.query<{ status: string }>(`SELECT status FROM outbox_events`);
    expect(row?.status).toBe('SENT');
  });
});
