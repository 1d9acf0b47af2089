/**
 * Scenario: PostgreSQL crash and restart.
 *
 * Invariant: every receipt acknowledged as accepted before the crash is still stored after crash
 * recovery; claims abandoned by the crash (handler transactions in flight) are recovered after the
 * lease and processed; the same Prisma client (PrismaPg adapter) keeps working after the restart;
 * every offered message has exactly one business effect and nothing is left unfinished.
 * Outbox relay: each handler emits one event in its transaction and a relay on the same client
 * publishes them; the crash hits it with a publish in flight (held by the broker until the server
 * is down). Every message leaves exactly one committed event, every event ends SENT and reached the
 * broker at least once (a publish whose SENT died with the server is repeated after the lease and
 * counted as absorbed), none stuck.
 *
 * Break: `pg_ctl stop -m immediate` (the postmaster and every backend die without a checkpoint,
 * as in a crash) while a producer is accepting batches and the worker holds claims, then `pg_ctl
 * start` (WAL crash recovery).
 *
 * fsync stays ON here. A PostgreSQL process crash keeps the kernel page cache, so fsync=off would
 * not lose committed data in this scenario either, but keeping the durable setting means the test
 * proves the configuration production runs, not a cheaper one.
 */
import type { Inbox } from '@ferry/core';
import { assertLedger } from '../harness/ledger';
import { PrivateCluster, waitUntil } from '../harness/privatePostgres';
import type { PrismaClient } from '../../generated/prisma/client';
import { emitHandledEvent, OutboxSide } from './outboxSide';
import {
  APP_DATABASE,
  Producer,
  ledgerFrom,
  makeInbox,
  messageIdsIn,
  prepareAppDatabase,
  prismaOn,
  receiptCounts,
  writeBusinessRow,
  scenarioSteps,
} from './support';
import { cleanUp, CLEANUP_HOOK_MS } from '../harness/scaffold';

const SCENARIO = 'database/crash-restart';

describe('PostgreSQL crash and restart', () => {
  let cluster: PrivateCluster | undefined;
  let prisma: PrismaClient | undefined;
  let inbox: Inbox | undefined;
  const outbox = new OutboxSide();

  // Each step bounded and run whatever the earlier ones did: the cluster goes also when a close hangs.
  afterAll(
    () => cleanUp(scenarioSteps({ inboxes: [inbox], outbox, clients: [prisma], clusters: [cluster] })),
    CLEANUP_HOOK_MS,
  );

  it('preserves accepted receipts, recovers abandoned claims by lease and applies every message once', async () => {
    cluster = await PrivateCluster.create('crash');
    await prepareAppDatabase(cluster);
    prisma = prismaOn(cluster.url(APP_DATABASE));

    // Handlers for "stall" messages hold their transaction open until the crash, so the crash
    // is guaranteed to abandon claims in flight rather than hoping to hit one.
    let releaseStalled!: () => void;
    const crashed = new Promise<void>((resolve) => (releaseStalled = resolve));
    const stallIds = new Set<string>();
    inbox = makeInbox(prisma, async (_payload, context) => {
      await writeBusinessRow(context);
      await emitHandledEvent(context);
      if (stallIds.has(context.messageId) && context.lifetimeAttempts === 1) await crashed;
    });
    await inbox.initialize();
    const producer = new Producer(inbox, 'crash');

    // Before the crash: a first batch fully processed, then stalled claims in flight.
    await producer.offerBatch(50);
    inbox.start();
    outbox.startRelay(prisma);
    await waitUntil('the first batch completed', async () => (await receiptCounts(prisma!)).completed === 50);
    // The broker holds the next publish until the server is down: a relay batch in flight.
    const heldPublish = outbox.holdNextPublish(crashed);
    for (const id of await producer.offerBatch(2)) stallIds.add(id);
    const stalledClaims = await waitUntil('both stalled messages claimed', async () => {
      const rows = await cluster!.query<{ message_id: string; claim_token: string }>(
        `SELECT message_id, claim_token::text FROM ferry_inbox_receipts
          WHERE status = 'PROCESSING' AND message_id = ANY($1)`,
        [[...stallIds]],
        APP_DATABASE,
      );
      return rows.length === stallIds.size ? rows : undefined;
    });

    // Traffic keeps flowing while the server dies: the producer redelivers any batch whose
    // acceptance failed.
    let producing = true;
    const traffic = (async () => {
      while (producing) await producer.offerBatch(10);
    })();
    await waitUntil('traffic during the crash window', async () => producer.acknowledged.size >= 100);
    await waitUntil('a relay publish held in flight', async () => heldPublish.reached());

    const acknowledgedBeforeCrash = new Set(producer.acknowledged);
    await cluster.stop('immediate');
    releaseStalled();
    await cluster.start();

    // The same Prisma client reconnects: its pool drops the dead connections.
    await waitUntil('the same Prisma client answers after restart', async () => {
      const rows = await prisma!.$queryRawUnsafe<{ one: number }[]>('SELECT 1::int AS one');
      return rows[0]?.one === 1;
    });

    // Receipt preservation: everything acknowledged before the crash survived crash recovery.
    const storedAfterRestart = new Set(await messageIdsIn(prisma, 'receipts'));
    const missing = [...acknowledgedBeforeCrash].filter((id) => !storedAfterRestart.has(id));
    expect(missing).toEqual([]);

    // Traffic goes on after the restart; the abandoned claims wait for their lease to run out.
    await waitUntil(
      'more traffic after the restart',
      async () => producer.acknowledged.size >= acknowledgedBeforeCrash.size + 50,
      60_000,
    );
    producing = false;
    await traffic;

    await waitUntil(
      'every receipt completed after recovery',
      async () => {
        const counts = await receiptCounts(prisma!);
        return counts.unfinished === 0 && counts.total === new Set(producer.offered).size;
      },
      60_000,
    );

    // Abandoned-claim recovery: each stalled message was claimed again (lifetime attempts ≥ 2,
    // new claim token) and completed; its first attempt's business row died with the crash.
    const recovered = await prisma.$queryRawUnsafe<
      { message_id: string; claim_token: string; status: string; lifetime_attempts: number }[]
    >(
      `SELECT message_id, claim_token::text, status, lifetime_attempts FROM ferry_inbox_receipts
        WHERE message_id = ANY($1)`,
      [...stallIds],
    );
    for (const row of recovered) {
      const before = stalledClaims.find((claim) => claim.message_id === row.message_id)!;
      expect(row.status).toBe('COMPLETED');
      expect(row.lifetime_attempts).toBeGreaterThanOrEqual(2);
      expect(row.claim_token).not.toBe(before.claim_token);
    }
    const stalledEffects = await prisma.$queryRawUnsafe<{ message_id: string; attempt: number }[]>(
      'SELECT message_id, attempt FROM business_effects WHERE message_id = ANY($1)',
      [...stallIds],
    );
    expect(stalledEffects).toHaveLength(stallIds.size);
    expect(stalledEffects.every((row) => row.attempt >= 2)).toBe(true);

    await waitUntil('every outbox event SENT after recovery', () => outbox.allSent(prisma!), 60_000);
    await inbox.close();
    await outbox.closeAll();
    const outboxLedger = await outbox.ledger(prisma, producer.offered);
    assertLedger(`${SCENARIO}/outbox`, outboxLedger);
    expect(outboxLedger.accepted).toBe(new Set(producer.offered).size);
    const ledger = await ledgerFrom(prisma, producer);
    process.stdout.write(
      `${SCENARIO}: acknowledged before crash=${acknowledgedBeforeCrash.size}, ` +
        `failed acceptance attempts (redelivered)=${producer.failedAttempts}, abandoned claims=${stallIds.size}\n`,
    );
    assertLedger(SCENARIO, ledger);
    expect(ledger.accepted).toBe(new Set(producer.offered).size);
  }, 90_000);
});
