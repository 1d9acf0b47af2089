/**
 * close() of the inbox worker and of the relay when their LISTEN connection went silent (a
 * network blackhole: no byte, no FIN, no RST). Ending a pg connection sends Terminate and a FIN
 * and waits for the server's FIN, which never comes: close() must not wait for it, and the inbox
 * must still tell a hung handler at shutdownTimeoutMs.
 */
import { createRelay } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { halfOpenProxy, type HalfOpenProxy } from '../../../../test-support/halfOpenProxy';
import { latch, makeInbox, message, waitFor } from '../inbox/helpers';
import { silent } from '../outbox/helpers';

let t: TestDatabase;
let proxy: HalfOpenProxy;
beforeEach(async () => {
  t = await createTestDatabase();
  proxy = await halfOpenProxy(new URL(t.url));
});
afterEach(async () => {
  proxy.close();
  await t.db.execute(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid()`,
  );
  await t.drop();
});

async function listening(): Promise<void> {
  await waitFor('the LISTEN connection to be listening', async () => {
    const [row] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND query ILIKE 'LISTEN%'`,
    );
    return (row?.n ?? 0) > 0;
  });
}

it('the inbox worker: close() returns and tells a hung handler although the LISTEN connection went silent', async () => {
  const started = latch();
  let handlerSignal: AbortSignal | undefined;
  const inbox = makeInbox(t.prisma, {
    worker: {
      pollIntervalMs: 50,
      shutdownTimeoutMs: 100,
      transactionTimeoutMs: 60_000,
      listenUrl: proxy.url(t.url),
      consumers: ['hung'],
    },
    handlers: {
      hung: async (_payload, context) => {
        handlerSignal = context.signal;
        started.open();
        await new Promise<void>(() => undefined);
      },
    },
  });
  await inbox.accept(message({ consumer: 'hung' }));
  inbox.start();
  await started.promise;
  await listening();
  proxy.silence();
  let closed = false;
  void inbox.close().then(() => (closed = true));
  await waitFor('close() to return and the hung handler to be told', async () =>
    closed && handlerSignal?.aborted === true ? true : undefined,
  );
});

it('the relay: close() returns although the LISTEN connection went silent', async () => {
  const relay = createRelay({
    db: t.db,
    publisher: new InMemoryPublisher(),
    listenUrl: proxy.url(t.url),
    logger: silent,
    options: { pollInterval: 50 },
  });
  relay.start();
  await listening();
  proxy.silence();
  let closed = false;
  void relay.close().then(() => (closed = true));
  await waitFor('close() to return', async () => (closed ? true : undefined));
});
