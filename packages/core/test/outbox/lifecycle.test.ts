import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { createRelay, emitMany, type Publisher } from '@ferry/core';
import { relayStore } from '@ferry/core/internal/testing';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { REGISTER_TS } from '../../../../test-support/registerTs';
import { silent, statusOf, waitFor } from './helpers';

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

async function emitN(n: number): Promise<string[]> {
  const events = Array.from({ length: n }, (_, i) => ({ type: 'test.event', payload: { i } }));
  return (await emitMany(t.db, events)).ids;
}

describe('relay lifecycle: heartbeat, observers, shutdown', () => {
  it('discards the outcome when the heartbeat finds the lease gone, and aborts the publisher', async () => {
    const [id] = await emitN(1);
    let seen: AbortSignal | undefined;
    const publisher: Publisher = {
      async publish(messages, signal) {
        seen = signal;
        const token = randomUUID();
        await t.db.execute(`UPDATE outbox_events SET claim_token = $1::uuid WHERE id = $2::uuid`, [
          token,
          id,
        ]);
        await waitFor(() => signal.aborted);
        return messages.map((m) => ({ id: m.id, status: 'sent' as const }));
      },
    };
    const lost: unknown[] = [];
    const r = createRelay({
      db: t.db,
      publisher,
      logger: silent,
      options: { lease: { duration: 1_000, heartbeatInterval: 50 } },
      observer: (e) => void (e.type === 'lease-lost' && lost.push(e)),
    });
    expect(await r.runOnce()).toMatchObject({ claimed: 1, lost: 1, sent: 0 });
    expect(seen?.aborted).toBe(true);
    expect(seen?.reason).toMatchObject({ code: 'FERRY_LEASE_LOST' });
    expect(lost).toEqual([
      { type: 'lease-lost', claimToken: expect.any(String), ids: [id], reason: expect.any(String) },
    ]);
    expect(await statusOf(t.db, id!)).toMatchObject({ status: 'PROCESSING' });
  });

  it('stops waiting for a publisher that ignores the abort once the lease is lost', async () => {
    const [id] = await emitN(1);
    const publisher: Publisher = {
      async publish() {
        await t.db.execute(`UPDATE outbox_events SET claim_token = $1::uuid WHERE id = $2::uuid`, [
          randomUUID(),
          id,
        ]);
        return new Promise(() => undefined);
      },
    };
    const r = createRelay({
      db: t.db,
      publisher,
      logger: silent,
      options: { lease: { duration: 1_000, heartbeatInterval: 50 } },
    });
    expect(await r.runOnce()).toMatchObject({ claimed: 1, lost: 1 });
  });

  it('a relay process killed (SIGKILL) after the broker accepted redelivers exactly once more', async () => {
    const [id] = await emitN(1);
    const fixtures = path.join(__dirname, 'fixtures');
    const child = spawn(
      process.execPath,
      ['-r', REGISTER_TS, path.join(fixtures, 'crashingRelay.ts'), t.url],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      await waitFor(() => output.includes(`DELIVERED ${id}`), 30_000);
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    // The dead process's lease runs out (database clock); the survivor's first cycle recovers it.
    await waitFor(async () => {
      const [row] = await t.db.query<{ expired: boolean }>(
        'SELECT lease_expires_at <= now() AS expired FROM outbox_events WHERE id = $1::uuid',
        [id],
      );
      return row?.expired === true;
    });
    const broker = new InMemoryPublisher();
    const survivor = createRelay({ db: t.db, publisher: broker, logger: silent });
    expect(await survivor.runOnce()).toMatchObject({ recovered: 1, sent: 1 });
    for (let i = 0; i < 11; i += 1) await survivor.runOnce();
    expect(output.match(/DELIVERED/g)).toHaveLength(1);
    expect(broker.deliveryCounts().get(id!)).toBe(1);
    expect(await statusOf(t.db, id!)).toMatchObject({ status: 'SENT', retry_count: 0, claim_count: 2 });
  });

  it('loses the lease after heartbeatFailureTolerance consecutive heartbeat errors', async () => {
    await emitN(1);
    const store = relayStore(t.db);
    let renewals = 0;
    const publisher: Publisher = {
      async publish(messages, signal) {
        await waitFor(() => signal.aborted);
        return messages.map((m) => ({ id: m.id, status: 'sent' as const }));
      },
    };
    const failingRenew = {
      ...store,
      renew: async () => {
        renewals += 1;
        throw new Error('db down');
      },
    };
    const r = createRelay({
      db: t.db,
      publisher,
      logger: silent,
      store: failingRenew,
      options: { lease: { duration: 5_000, heartbeatInterval: 20, heartbeatFailureTolerance: 3 } },
    });
    expect(await r.runOnce()).toMatchObject({ lost: 1, sent: 0 });
    expect(renewals).toBe(3);
  });

  it('a throwing observer cannot break the relay', async () => {
    const [id] = await emitN(1);
    const boom = () => {
      throw new Error('observer bug');
    };
    const r = createRelay({
      db: t.db,
      publisher: new InMemoryPublisher(),
      logger: silent,
      observer: (e) => (e.type === 'sent' ? Promise.reject(new Error('async bug')) : boom()),
    });
    expect(await r.runOnce()).toMatchObject({ sent: 1 });
    expect(await statusOf(t.db, id!)).toMatchObject({ status: 'SENT' });
  });

  it('shutdown releases claims whose publish never started', async () => {
    const [id] = await emitN(1);
    const publisher = new InMemoryPublisher();
    let closing: Promise<void> | undefined;
    const r = createRelay({
      db: t.db,
      publisher,
      logger: silent,
      observer: (e) => {
        if (e.type === 'claimed') closing = r.close();
      },
    });
    expect(await r.runOnce()).toMatchObject({ claimed: 1, released: 1 });
    await closing;
    expect(publisher.attempts).toHaveLength(0);
    expect(await statusOf(t.db, id!)).toMatchObject({ status: 'PENDING', claim_count: 0, retry_count: 0 });
    await expect(r.runOnce()).rejects.toMatchObject({ code: 'FERRY_CLOSED' });
  });

  it('close() drains an in-flight publish, and aborts it after shutdownTimeout', async () => {
    const [id] = await emitN(1);
    let release: (() => void) | undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const publisher = new InMemoryPublisher({
      decide: async () => {
        await gate;
        return 'sent' as const;
      },
    });
    const r = createRelay({ db: t.db, publisher, logger: silent, options: { pollInterval: 50 } });
    r.start();
    await waitFor(() => publisher.attempts.length === 1);
    const closed = r.close();
    release?.();
    await closed;
    expect(await statusOf(t.db, id!)).toMatchObject({ status: 'SENT' });
    await r.close();

    const [hung] = await emitN(1);
    let started = false;
    let aborted = false;
    const hanging: Publisher = {
      async publish(_m, signal) {
        started = true;
        await waitFor(() => signal.aborted);
        aborted = true;
        return [];
      },
    };
    const r2 = createRelay({
      db: t.db,
      publisher: hanging,
      logger: silent,
      options: { shutdownTimeout: 100, pollInterval: 50 },
    });
    r2.start();
    // The publish itself, not just the claim: a close() between the two releases the claim unpublished.
    await waitFor(() => started);
    expect(await statusOf(t.db, hung!)).toMatchObject({ status: 'PROCESSING' });
    await r2.close();
    await waitFor(() => aborted);
    expect(r2.state).toBe('closed');
  });
});
