/**
 * review45: a relay publishes rows whose lease it already knows to be over.
 *
 * What I did: relay A runs on its own pool through a TCP proxy that holds back (does not drop) the
 * answers PostgreSQL sends once A's claim statement went through: PostgreSQL ran and committed
 * the claim of e1 (key K) at once, and A hears of it only later, as on a network that stalls or a
 * process paused (SIGSTOP) right after sending the claim. lease.duration is 1 s, statementTimeout
 * 10 s (nothing relates the two). While A waits, its lease expires; relay B recovers e1, publishes
 * it, completes it, then claims and publishes e2 (key K). Then the proxy lets A's answer through.
 *
 * What happened: A got the claimed row 1.5 s after sending the claim, more than the whole lease
 * later, and handed e1 to the publisher at once: startLease() only schedules its first check (a
 * timer, already due) and publishBatch() checks nothing but the abort signal before publishing.
 * The broker got e1, e2, e1: key K out of order and a duplicate nobody needed. (A's completion is
 * fenced, so the table stays right; the damage is at the broker.)
 *
 * What should happen (docs/outbox.md, Lease: "the lease is counted from the local time the claim
 * ... was sent ... Local expiry comes one heartbeatInterval before the database lease expires, so
 * a relay stops publishing before another relay can recover and claim the same rows"; Ordering:
 * "a key has at most one event in flight across any number of relays ... published in insertion
 * order"): a batch whose local lease (claimedAt + duration - heartbeatInterval) has passed when
 * its rows arrive is never published; A reports it lost and leaves it to recovery.
 *
 * The inbox worker already does this (inbox/claimQueue.ts take(): a queued claim whose
 * provenAt + leaseMs - heartbeatIntervalMs has passed is dropped, never started); the relay does not.
 *
 * Fix direction: in publishBatch (or startLease), before calling publish(), compare now with
 * claimedAt + duration - interval and treat the lease as lost (expired) when it has passed; and
 * consider refusing statementTimeout >= lease.duration - heartbeatInterval, or shortening the
 * claim's deadline to what is left of the lease.
 */
import net from 'node:net';
import { Pool } from 'pg';
import { createRelay, emitMany, fromPg } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { silent, statusOf } from './outbox/helpers';

/** A proxy that, once a client sent bytes holding `marker`, holds the answers back until release(). */
async function holdingProxy(target: URL, marker: string) {
  let holding = false;
  const held: Array<() => void> = [];
  const sockets: net.Socket[] = [];
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.push(client, upstream);
    client.on('data', (chunk: Buffer) => {
      if (chunk.includes(marker)) holding = true;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (holding) held.push(() => client.write(chunk));
      else client.write(chunk);
    });
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url(url: string): string {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    holding: () => holding,
    release(): void {
      holding = false;
      for (const write of held.splice(0)) write();
    },
    close(): void {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it('does not publish a claim whose answer came after its lease was over', async () => {
  const { ids } = await emitMany(t.db, [
    { type: 'k.1', orderingKey: 'K', payload: { n: 1 } },
    { type: 'k.2', orderingKey: 'K', payload: { n: 2 } },
  ]);
  const [e1, e2] = ids as [string, string];
  const broker = new InMemoryPublisher();
  const options = { batchSize: 1, lease: { duration: 1_000 }, statementTimeout: 10_000 };

  const proxy = await holdingProxy(new URL(t.url), 'claimed AS');
  const pool = new Pool({ connectionString: proxy.url(t.url), max: 1 });
  pool.on('error', () => undefined);
  const a = createRelay({ db: fromPg(pool), publisher: broker, logger: silent, options });
  const b = createRelay({ db: t.db, publisher: broker, logger: silent, options });
  try {
    const late = a.runOnce();
    // A's claim ran: e1 is PROCESSING under A's token, A has not heard so.
    const deadline = Date.now() + 10_000;
    while ((await statusOf(t.db, e1)).status !== 'PROCESSING' && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(proxy.holding()).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // past A's whole lease

    expect(await b.runOnce()).toMatchObject({ recovered: 1, sent: 1 }); // e1
    expect(await b.runOnce()).toMatchObject({ sent: 1 }); // e2
    proxy.release();
    await late;

    expect(await statusOf(t.db, e1)).toMatchObject({ status: 'SENT' });
    expect(await statusOf(t.db, e2)).toMatchObject({ status: 'SENT' });
    // What the broker got for key K, in order: each once, e1 before e2.
    expect(broker.delivered.map((m) => m.id)).toEqual([e1, e2]);
  } finally {
    proxy.release();
    await a.close();
    await b.close();
    await pool.end().catch(() => undefined);
    proxy.close();
  }
}, 30_000);
