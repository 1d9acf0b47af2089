/**
 * Scenario: PostgreSQL goes silent and the application set NO driver timeouts.
 *
 * The application's client is what most applications build: Prisma on `@prisma/adapter-pg` with a
 * default pg pool, or a plain `pg.Pool` (`pgTransactions`, `fromPg`), without `query_timeout`,
 * `statement_timeout` or `connectionTimeoutMillis`. On such a pool pg waits for an answer, and for
 * a new connection, forever.
 *
 * Breaks: the inbox worker and an outbox relay run on that client through the TCP proxy. The
 * proxy turns into a blackhole and a batch is offered. Then the proxy passes again. On the plain
 * pg pool it keeps the connections that lived through the blackhole half-open: silent for good,
 * no FIN, no RST (`setMode('pass', { keepDamaged: true })`), so nothing the driver does ever ends
 * a statement sent on one of them. On Prisma it resets them (the proxy's default heal): a Prisma
 * pool cannot be told to give a connection up, so with no driver timeouts each half-open
 * connection that catches a statement is lost to the pool for good, and a pool that held all its
 * connections through the silence has none left (package README, "When PostgreSQL goes silent").
 *
 * Invariant: every wait ferry owns has a deadline of its own (inbox `statementTimeoutMs`, relay
 * `statementTimeout`): acceptance during the blackhole fails typed and retriable (FERRY_TIMEOUT or
 * FERRY_DATABASE_UNAVAILABLE), with nothing stored; after the heal the worker and the relay resume
 * on new connections (on pg although statements they sent on the half-open ones never answer:
 * ferry destroys those connections); the refused batch is redelivered; every message completes
 * once and every event is SENT; close() returns. Ledger: lost = 0, appliedTwice = 0, stuck = 0.
 *
 * An RST on a pg connection while a bounded statement waits on it fails the statement typed
 * (FERRY_DATABASE_UNAVAILABLE), never as an unhandled connection error, and the connection leaves
 * the pool.
 *
 * The same through a RabbitMQ consumer (`attachRabbitConsumer`, the shared RabbitMQ on 5672, a
 * unique queue): deliveries that arrive during the blackhole are held (`acceptance-unavailable`,
 * a typed retriable error), none is dead-lettered or stored, and after the heal the consumer
 * recovers by itself (`acceptance-recovered`) and every message is applied once.
 */
import amqp from 'amqplib';
import pg from 'pg';
import {
  FERRY_HEADERS,
  createRelay,
  emit,
  fromPg,
  fromPrisma,
  Inbox,
  isFerryError,
  pgTransactions,
  prismaTransactions,
  type InboxHandlerContext,
  type SqlExecutor,
} from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { InMemoryPublisher } from '@ferry/testing';
import { RabbitConnection, attachRabbitConsumer, deleteWorkQueue } from '@ferry/rabbitmq';
import { type TestDatabase, prismaFor, prismaOnPool } from '../../test-support/database';
import { assertLedger } from '../harness/ledger';
import { faultSuite } from '../harness/scaffold';
import {
  deliverUntilAcknowledged,
  inboxLedger,
  inputs,
  newOffering,
  proxiedDatabase,
  quietLogger,
  track,
  waitFor,
  waitUntilSettled,
  writeBusinessRow,
} from './support';
import { AMQP_CONNECT_TIMEOUT_MS, AMQP_URL } from '../harness/brokers';

/** ferry's own bounds (no driver timeouts anywhere). */
const STATEMENT_TIMEOUT_MS = 1_500;

/**
 * `prisma`: PrismaPg with its own default pool. `prisma-on-pool`: the package README's recipe, a
 * pg pool shared by PrismaPg and ferry's own statements (`prismaTransactions(prisma, { db:
 * fromPg(pool) })`), so ferry can give its connections up. `pg`: a plain pg pool.
 */
type Kind = 'prisma' | 'prisma-on-pool' | 'pg';

/** The application's client on `url`, built with no driver timeout at all. */
function applicationClient(kind: Kind, url: string) {
  if (kind === 'prisma-on-pool') {
    const pool = new pg.Pool({ connectionString: url, max: 10 });
    pool.on('error', () => undefined);
    const prisma = prismaOnPool(pool);
    return {
      db: fromPg(pool),
      inbox: (handle: (context: InboxHandlerContext) => Promise<void>) =>
        new Inbox(prismaTransactions(prisma, { db: fromPg(pool) }), inboxOptions(handle)),
      end: async () => {
        await prisma.$disconnect();
        await pool.end();
      },
      park: async () => undefined, // healed with resets: no half-open connection to meet
    };
  }
  if (kind === 'prisma') {
    const prisma = prismaFor(url);
    return {
      db: fromPrisma(prisma),
      inbox: (handle: (context: InboxHandlerContext) => Promise<void>) =>
        new Inbox(prisma, inboxOptions(handle)),
      end: () => prisma.$disconnect(),
      park: async () => undefined,
    };
  }
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  pool.on('error', () => undefined); // a reset idle connection is the proxy's doing, not the test's
  return {
    db: fromPg(pool),
    inbox: (handle: (context: InboxHandlerContext<pg.PoolClient>) => Promise<void>) =>
      new Inbox(pgTransactions(pool), inboxOptions(handle)),
    end: () => pool.end(),
    park: () => parkIdle(pool),
  };
}

/**
 * Fills `pool` with idle connections (all it may hold), so that some are still idle, and so
 * half-open, when the blackhole ends: the worker and the relay then meet them after the heal.
 */
async function parkIdle(pool: pg.Pool): Promise<void> {
  const clients = await Promise.all(Array.from({ length: pool.options.max }, () => pool.connect()));
  for (const client of clients) client.release();
}

function inboxOptions<TTx>(handle: (context: InboxHandlerContext<TTx>) => Promise<void>) {
  return {
    logger: quietLogger,
    statementTimeoutMs: STATEMENT_TIMEOUT_MS,
    handlers: { orders: (_payload: unknown, context: InboxHandlerContext<TTx>) => handle(context) },
    worker: {
      concurrency: 2,
      pollIntervalMs: 50,
      leaseMs: 3_000,
      heartbeatIntervalMs: 300,
      transactionTimeoutMs: 4_000,
      transactionMaxWaitMs: 1_500,
      retryBaseMs: 10,
      retryMaxMs: 100,
      shutdownTimeoutMs: 2_000,
    },
  };
}

async function businessWrite(kind: Kind, context: InboxHandlerContext<unknown>): Promise<void> {
  if (kind !== 'pg') return writeBusinessRow(context as InboxHandlerContext);
  await (context.tx as pg.PoolClient).query(
    'INSERT INTO business_rows (message_id, receipt_id) VALUES ($1, $2::uuid)',
    [context.messageId, context.receiptId],
  );
}

async function unsent(t: TestDatabase): Promise<number> {
  const [row] = await t.db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM outbox_events WHERE status <> 'SENT'",
  );
  return Number(row?.n ?? 1);
}

async function emitEvents(db: SqlExecutor, prefix: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    await emit(db, { type: 'silent.tick', payload: { n: i }, correlationId: `${prefix}-${i}` });
  }
}

describe.each<Kind>(['prisma', 'prisma-on-pool', 'pg'])(
  'operations: silent-database (%s, no driver timeouts)',
  (kind) => {
    const suite = faultSuite();
    const fixture = proxiedDatabase();

    it('bounds acceptance in the blackhole and resumes past half-open connections', async () => {
      const { t, proxy } = fixture;
      const client = applicationClient(kind, proxy.urlFor(t.url));
      suite.defer(() => client.end());
      suite.defer(() => proxy.resetAll()); // ends the half-open connections before the pool is ended
      const inbox = client.inbox((context) => businessWrite(kind, context as InboxHandlerContext<unknown>));
      suite.defer(() => inbox.close());
      const publisher = new InMemoryPublisher();
      const relay = createRelay({
        db: client.db,
        publisher,
        logger: quietLogger,
        options: {
          pollInterval: 50,
          lease: { duration: 3_000, heartbeatInterval: 500 },
          shutdownTimeout: 1_000,
          errorBackoff: 50,
          statementTimeout: STATEMENT_TIMEOUT_MS,
        },
      });
      suite.defer(() => relay.close());
      await inbox.initialize();
      inbox.start();
      relay.start();
      const offering = newOffering();

      const before = inputs(`sd-${kind}-before`, 10);
      await deliverUntilAcknowledged(inbox, before, offering);
      await emitEvents(t.db, `${kind}-before`, 5);
      await waitUntilSettled(t);
      await waitFor('the first events SENT', async () => (await unsent(t)) === 0);
      await client.park();

      // Blackhole: acceptance goes nowhere; events are emitted meanwhile (the server itself is up).
      await proxy.setMode('blackhole');
      const during = inputs(`sd-${kind}-during`, 10);
      offering.offered += during.length;
      const acceptance = track(inbox.acceptMany(during));
      await waitFor('acceptance during the blackhole to fail', () => acceptance.settled(), 30_000);
      const { error } = acceptance.outcome();
      expect(isFerryError(error, 'FERRY_TIMEOUT') || isFerryError(error, 'FERRY_DATABASE_UNAVAILABLE')).toBe(
        true,
      );
      expect((error as { retriable: boolean }).retriable).toBe(true);
      offering.failedBatches += 1;
      await emitEvents(t.db, `${kind}-during`, 5);
      const [stored] = await t.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM ferry_inbox_receipts WHERE message_id LIKE $1',
        [`sd-${kind}-during-%`],
      );
      expect(stored?.n).toBe(0);

      // Heal. On pg the connections that lived through the blackhole stay silent for good: those
      // ferry gave up on during it are closed already, the idle ones parked before it are not, so
      // the worker and the relay meet half-open connections after the heal.
      const halfOpen = kind === 'pg';
      await proxy.setMode('pass', { keepDamaged: halfOpen });
      const halfOpenAtHeal = proxy.damagedConnections;
      if (halfOpen) expect(halfOpenAtHeal).toBeGreaterThan(0);
      await deliverUntilAcknowledged(inbox, during, offering, 30_000);
      await waitUntilSettled(t, 30_000);
      await waitFor('every event SENT after the heal', async () => (await unsent(t)) === 0, 30_000);

      const closed = track(Promise.all([inbox.close(), relay.close()]));
      await waitFor('inbox and relay closed', () => closed.settled(), 30_000);
      expect(closed.outcome().error).toBeUndefined();

      const offeredIds = [...before, ...during].map((input) => input.messageId);
      process.stdout.write(
        `silent-database/${kind}: acceptError=${(error as Error).message} proxyConnections=${proxy.accepted} ` +
          `halfOpenAtHeal=${halfOpenAtHeal} halfOpenLeft=${proxy.damagedConnections} published=${publisher.delivered.length}\n`,
      );
      const ledger = await inboxLedger(t, offeredIds, offering);
      assertLedger(`silent-database/${kind}`, ledger);
      expect(ledger.effectsApplied).toBe(offeredIds.length);
      expect(new Set(publisher.delivered.map((m) => m.correlationId)).size).toBe(10);
    });

    it('closes the worker and the relay while the blackhole lasts', async () => {
      const { t, proxy } = fixture;
      await proxy.setMode('pass');
      const client = applicationClient(kind, proxy.urlFor(t.url));
      suite.defer(() => client.end());
      const inbox = client.inbox((context) => businessWrite(kind, context as InboxHandlerContext<unknown>));
      const relay = createRelay({
        db: client.db,
        publisher: new InMemoryPublisher(),
        logger: quietLogger,
        options: { pollInterval: 50, shutdownTimeout: 1_000, statementTimeout: STATEMENT_TIMEOUT_MS },
      });
      suite.defer(
        () => inbox.close(),
        () => relay.close(),
      );
      await inbox.initialize();
      inbox.start();
      relay.start();
      await waitFor('a relay cycle', () => relay.lastCycleAt !== null);
      await proxy.setMode('blackhole');
      await emitEvents(t.db, `${kind}-close`, 1);
      await waitFor('a relay statement sent into the blackhole', () => !relay.idle);
      const closed = track(Promise.all([inbox.close(), relay.close()]));
      await waitFor('inbox and relay closed in the blackhole', () => closed.settled(), 30_000);
      expect(closed.outcome().error).toBeUndefined();
      expect(relay.state).toBe('closed');
      await proxy.setMode('pass');
    });
  },
);

describe('operations: silent-database (pg, a reset under a bounded statement)', () => {
  const suite = faultSuite();
  const fixture = proxiedDatabase();

  it('fails typed, with no unhandled connection error, when the connection is reset mid-statement', async () => {
    const { t, proxy } = fixture;
    const pool = new pg.Pool({ connectionString: proxy.urlFor(t.url), max: 1 });
    pool.on('error', () => undefined);
    suite.defer(() => pool.end());
    const inbox = new Inbox(pgTransactions(pool), { logger: quietLogger, statementTimeoutMs: 60_000 });
    await inbox.acceptMany(inputs('sd-reset-before', 1)); // the pool's one connection, established
    await proxy.setMode('blackhole');
    const acceptance = track(inbox.acceptMany(inputs('sd-reset', 2)));
    await waitFor('the statement on the checked-out connection', () => pool.idleCount === 0);
    await proxy.setMode('pass', { keepDamaged: true });
    proxy.resetAll(); // RST while the statement waits: pg reports it as the connection's error event
    await waitFor('the acceptance to fail', () => acceptance.settled(), 30_000);
    const { error } = acceptance.outcome();
    expect(isFerryError(error, 'FERRY_DATABASE_UNAVAILABLE')).toBe(true);
    expect(pool.totalCount).toBe(0);
  });
});

describe('operations: silent-database (RabbitMQ consumer, prisma, no driver timeouts)', () => {
  let admin: amqp.ChannelModel;
  let channel: amqp.ConfirmChannel;
  const suite = faultSuite();
  const fixture = proxiedDatabase();
  beforeAll(async () => {
    admin = await amqp.connect(AMQP_URL, { timeout: AMQP_CONNECT_TIMEOUT_MS });
    channel = await admin.createConfirmChannel();
  });
  afterAll(async () => {
    await admin?.close().catch(() => undefined);
  });

  async function publish(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      channel.sendToQueue(queue, Buffer.from(JSON.stringify({ id })), {
        persistent: true,
        contentType: 'application/json',
        headers: { [FERRY_HEADERS.messageId]: id },
      });
    }
    await channel.waitForConfirms();
  }
  const queue = `fault.silent.${Date.now().toString(36)}`;

  it('holds deliveries in the blackhole with a typed error and recovers after it', async () => {
    const { t, proxy } = fixture;
    const client = applicationClient('prisma', proxy.urlFor(t.url));
    suite.defer(() => client.end());
    suite.defer(() => proxy.resetAll());
    const inbox = client.inbox((context) => businessWrite('prisma', context as InboxHandlerContext<unknown>));
    suite.defer(() => inbox.close());
    await inbox.initialize();
    inbox.start();
    const events: TransportConsumerEvent[] = [];
    const connection = new RabbitConnection({ url: AMQP_URL, connectionName: 'fault-silent-database' });
    suite.defer(() => connection.close());
    const consumer = attachRabbitConsumer(inbox, {
      connection,
      queue,
      consumer: 'orders',
      tenant: { fixed: 'acme' },
      retryBackoff: { initialMs: 100, maxMs: 400 },
      logger: quietLogger,
      observer: (event) => void events.push(event),
    });
    suite.defer(async () => {
      await consumer.close();
      await deleteWorkQueue(channel, { queue, retryTiersMs: consumer.names.retryTiersMs });
    });
    await consumer.ready();
    const before = Array.from({ length: 5 }, (_, i) => `sd-rabbit-before-${i}`);
    await publish(before);
    await waitUntilSettled(t);
    await waitFor('the first receipts', async () => (await receipts(t)) === before.length);

    await proxy.setMode('blackhole');
    const during = Array.from({ length: 5 }, (_, i) => `sd-rabbit-during-${i}`);
    await publish(during);
    const held = await waitFor(
      'deliveries held during the blackhole',
      () => events.find((event) => event.type === 'acceptance-unavailable'),
      30_000,
    );
    expect(held.type === 'acceptance-unavailable' && held.error).toMatch(
      /^FERRY_(TIMEOUT|DATABASE_UNAVAILABLE): /,
    );
    expect(await receipts(t)).toBe(before.length);
    process.stdout.write(`silent-database/rabbitmq: held=${JSON.stringify(held)}\n`);

    await proxy.setMode('pass');
    await waitFor(
      'acceptance recovered',
      () => events.some((event) => event.type === 'acceptance-recovered'),
      30_000,
    );
    await waitFor(
      'every delivery accepted',
      async () => (await receipts(t)) === before.length + during.length,
      30_000,
    );
    await waitUntilSettled(t, 30_000);
    const closed = track(Promise.all([consumer.close(), inbox.close()]));
    await waitFor('consumer and inbox closed', () => closed.settled(), 30_000);

    expect(
      events.filter((event) => event.type === 'dead-lettered' || event.type === 'acceptance-failed'),
    ).toEqual([]);
    const offering = { ...newOffering(), offered: before.length + during.length };
    const ledger = await inboxLedger(t, [...before, ...during], offering);
    assertLedger('silent-database/rabbitmq', ledger);
    expect(ledger.effectsApplied).toBe(before.length + during.length);
  });
});

async function receipts(t: TestDatabase): Promise<number> {
  const [row] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM ferry_inbox_receipts');
  return Number(row?.n ?? 0);
}
