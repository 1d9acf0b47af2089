/**
 * Review 38: a LISTEN connection whose `LISTEN` statement is never answered is never replaced.
 *
 * NotifyListener.listen() (src/wake/notifyListener.ts) bounds `client.connect()` by
 * `connectionTimeoutMillis: keepaliveTimeout`, but then awaits `client.query('LISTEN "<channel>"')`
 * with no deadline; the keepalive that finds silent connections is only armed after that statement
 * answered. When the network goes silent (no FIN, no RST) between the connect and the LISTEN's
 * answer, e.g. a failover or a firewall dropping its state at that moment, the attempt waits for
 * ever: no timeout, no log line, no reconnect. `listener.connected` stays false and `connects` 0
 * for the life of the process, although new connections to PostgreSQL pass again at once.
 *
 * Contract: docs/outbox.md "Wake-up": a connection that dies silently "is noticed by a keepalive:
 * every listen.keepaliveInterval it must answer SELECT 1 within listen.keepaliveTimeout (connecting
 * has the same deadline); otherwise its socket is destroyed and it is replaced". The inbox worker
 * uses the same listener (docs/inbox.md "Claim queue and wake-up").
 *
 * Why it matters: wake-ups are lost for good, silently; a relay (or worker) tuned with a long poll
 * interval because LISTEN wakes it delivers every event a whole poll interval late until restart.
 *
 * Fix direction: give the LISTEN statement the connect deadline (race it against keepaliveTimeout
 * and call lost() on expiry, or arm the keepalive before sending LISTEN).
 */
import net from 'node:net';
import { createRelay, emit } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { silent, waitFor } from './outbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/**
 * A proxy to PostgreSQL on which the first connection that sends `marker` goes silent for good
 * (its bytes dropped both ways, no FIN, no RST); every other connection passes.
 */
async function silenceFirst(target: URL, marker: string) {
  const mark = Buffer.from(marker);
  let silenced = 0;
  const sockets: net.Socket[] = [];
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    let silentHere = false;
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.push(client, upstream);
    client.on('data', (chunk: Buffer) => {
      if (!silentHere && silenced === 0 && chunk.includes(mark)) {
        silentHere = true;
        silenced += 1;
      }
      if (!silentHere) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => void (silentHere || client.write(chunk)));
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
    upstream.on('close', () => void (silentHere || client.destroy()));
    client.on('close', () => void (silentHere || upstream.destroy()));
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
    silenced: () => silenced,
    close(): void {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

async function sent(id: string): Promise<boolean> {
  const [row] = await t.db.query<{ status: string }>('SELECT status FROM outbox_events WHERE id = $1::uuid', [
    id,
  ]);
  return row?.status === 'SENT';
}

it('a LISTEN statement left unanswered by a silent network is given up within keepaliveTimeout and the connection replaced', async () => {
  const proxy = await silenceFirst(new URL(t.url), 'LISTEN "ferry_outbox"');
  const relay = createRelay({
    db: t.db,
    publisher: new InMemoryPublisher(),
    listenUrl: proxy.url(t.url),
    logger: silent,
    options: {
      // Only a notification (or the poll after a LISTEN (re)connect) can wake this relay.
      pollInterval: 600_000,
      listen: {
        keepaliveInterval: 100,
        keepaliveTimeout: 300,
        reconnectInitialDelay: 20,
        reconnectMaxDelay: 100,
      },
    },
  });
  relay.start();
  try {
    await waitFor(() => proxy.silenced() === 1);
    // New connections pass: a listener that gave the silent one up is LISTENing again well within
    // this wait (keepaliveTimeout 300 ms, reconnect after 20 ms).
    await waitFor(() => relay.listener?.connected === true, 15_000);
    const { id } = await emit(t.db, { type: 'review38.listen', payload: {} });
    await waitFor(() => sent(id), 15_000);
  } finally {
    await relay.close();
    proxy.close();
  }
}, 40_000);
