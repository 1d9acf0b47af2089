/**
 * Scenario: PostgreSQL standby promotion.
 *
 * Invariant: after the standby has confirmed replay of the primary's WAL position taken after the
 * tested writes, promoting it loses no receipt acknowledged before that position; claims abandoned
 * on the old primary are recovered on the promoted server after the lease; every message is
 * processed exactly once in the business table of the promoted server, including traffic offered
 * after the failover. Outbox relay: each handler emits one event in its transaction; a relay on the
 * primary has a publish in flight (held by the broker) when the primary dies, and a new relay on
 * the promoted server takes over with the same broker. Every message leaves exactly one committed
 * event on the promoted server, every event ends SENT there and reached the broker at least once
 * (SENT marks written after the confirmed position may be missing: those events are published
 * again and counted as absorbed), none stuck.
 *
 * Break: a primary and a streaming standby (`pg_basebackup -R`, its own port). Accept and process
 * on the primary with two handler transactions held open; stop accepting, record
 * `pg_current_wal_lsn()` and wait until the standby's `pg_last_wal_replay_lsn()` has reached it; kill
 * the primary (`pg_ctl stop -m immediate`); `pg_ctl promote` the standby.
 *
 * Reconnection: the application reconnects to the promoted endpoint with a NEW Prisma client on the
 * standby's port (and a new Inbox on it), as a redeployed or re-pointed service would; the old
 * instance is closed. Endpoint routing is the infrastructure's job and is not modelled here.
 *
 * Limit: this does not establish zero data loss under arbitrary asynchronous failover. Writes
 * committed on the primary after the recorded position (here: completions of the worker still
 * running) may be missing on the standby; the scenario only shows they are then redone, once.
 *
 * fsync is off: only PostgreSQL processes are killed, never the OS, so the kernel keeps every write.
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

const SCENARIO = 'database/standby-promotion';
const FAST = { fsync: 'off' };

describe('PostgreSQL standby promotion', () => {
  let primary: PrivateCluster | undefined;
  let standby: PrivateCluster | undefined;
  const clients: PrismaClient[] = [];
  const inboxes: Inbox[] = [];
  const outbox = new OutboxSide();

  // Each step bounded and run whatever the earlier ones did: the clusters go also when a close hangs.
  afterAll(
    () => cleanUp(scenarioSteps({ inboxes, outbox, clients, clusters: [primary, standby] })),
    CLEANUP_HOOK_MS,
  );

  it('keeps receipts replayed before promotion, recovers abandoned claims and processes each message once', async () => {
    primary = await PrivateCluster.create('primary', { settings: FAST });
    await prepareAppDatabase(primary);
    standby = await PrivateCluster.standbyOf(primary, 'standby', { settings: FAST });
    await waitUntil('the standby streaming from the primary', async () => {
      const rows = await primary!.query<{ state: string }>('SELECT state FROM pg_stat_replication');
      return rows[0]?.state === 'streaming';
    });

    let releaseStalled!: () => void;
    const primaryKilled = new Promise<void>((resolve) => (releaseStalled = resolve));
    const stallIds = new Set<string>();
    const handler = async (
      _payload: Readonly<Record<string, unknown>>,
      context: Parameters<typeof writeBusinessRow>[0],
    ) => {
      await writeBusinessRow(context);
      await emitHandledEvent(context);
      if (stallIds.has(context.messageId) && context.lifetimeAttempts === 1) await primaryKilled;
    };

    const onPrimary = prismaOn(primary.url(APP_DATABASE));
    clients.push(onPrimary);
    const oldInbox = makeInbox(onPrimary, handler);
    inboxes.push(oldInbox);
    await oldInbox.initialize();
    oldInbox.start();
    const oldRelay = outbox.startRelay(onPrimary);
    const producer = new Producer(oldInbox, 'failover');

    // The tested writes on the primary: processed receipts, receipts accepted while the worker
    // is busy, and two claims held open by stalled handlers.
    await producer.offerBatch(40);
    await waitUntil(
      'the first batch completed',
      async () => (await receiptCounts(onPrimary)).completed === 40,
    );
    for (const id of await producer.offerBatch(2)) stallIds.add(id);
    const stalledClaims = await waitUntil('both stalled messages claimed', async () => {
      const rows = await primary!.query<{ message_id: string; claim_token: string }>(
        `SELECT message_id, claim_token::text FROM ferry_inbox_receipts
          WHERE status = 'PROCESSING' AND message_id = ANY($1)`,
        [[...stallIds]],
        APP_DATABASE,
      );
      return rows.length === stallIds.size ? rows : undefined;
    });
    const heldPublish = outbox.holdNextPublish(primaryKilled);
    await producer.offerBatch(40);
    await waitUntil('a relay publish held in flight on the primary', async () => heldPublish.reached());

    // Stop acknowledging, take the WAL position after the tested writes, confirm replay.
    const acknowledgedBeforeFailover = new Set(producer.acknowledged);
    const [{ lsn } = { lsn: '' }] = await primary.query<{ lsn: string }>(
      'SELECT pg_current_wal_lsn()::text AS lsn',
    );
    await waitUntil(`the standby to replay WAL up to ${lsn}`, async () => {
      const [row] = await standby!.query<{ caught_up: boolean }>(
        'SELECT pg_wal_lsn_diff(pg_last_wal_replay_lsn(), $1::pg_lsn) >= 0 AS caught_up',
        [lsn],
      );
      return row?.caught_up === true;
    });

    // Fail over.
    await primary.stop('immediate');
    releaseStalled();
    await oldInbox.close().catch(() => undefined);
    await oldRelay.close().catch(() => undefined);
    await standby.promote();
    await waitUntil('the promoted server to accept writes', async () => {
      const [row] = await standby!.query<{ recovery: boolean }>('SELECT pg_is_in_recovery() AS recovery');
      return row?.recovery === false;
    });

    // The application reconnects to the promoted endpoint.
    const onPromoted = prismaOn(standby.url(APP_DATABASE));
    clients.push(onPromoted);
    const newInbox = makeInbox(onPromoted, handler);
    inboxes.push(newInbox);
    await newInbox.initialize();

    // Receipt preservation: everything acknowledged before the confirmed position is there.
    const stored = new Set(await messageIdsIn(onPromoted, 'receipts'));
    expect([...acknowledgedBeforeFailover].filter((id) => !stored.has(id))).toEqual([]);
    // The abandoned claims came across as claims of the old primary's worker.
    const carried = await onPromoted.$queryRawUnsafe<
      { message_id: string; claim_token: string; status: string }[]
    >('SELECT message_id, claim_token::text, status FROM ferry_inbox_receipts WHERE message_id = ANY($1)', [
      ...stallIds,
    ]);
    for (const claim of stalledClaims) {
      expect(carried).toContainEqual({ ...claim, status: 'PROCESSING' });
    }

    newInbox.start();
    outbox.startRelay(onPromoted);
    producer.inbox = newInbox;
    await producer.offerBatch(40);
    await waitUntil(
      'every receipt completed on the promoted server',
      async () => {
        const counts = await receiptCounts(onPromoted);
        return counts.unfinished === 0 && counts.total === new Set(producer.offered).size;
      },
      60_000,
    );

    const recovered = await onPromoted.$queryRawUnsafe<
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

    await waitUntil(
      'every outbox event SENT on the promoted server',
      () => outbox.allSent(onPromoted),
      60_000,
    );
    await newInbox.close();
    await outbox.closeAll();
    const outboxLedger = await outbox.ledger(onPromoted, producer.offered);
    assertLedger(`${SCENARIO}/outbox`, outboxLedger);
    expect(outboxLedger.accepted).toBe(new Set(producer.offered).size);
    const ledger = await ledgerFrom(onPromoted, producer);
    process.stdout.write(
      `${SCENARIO}: replay confirmed at ${lsn}; acknowledged before failover=${acknowledgedBeforeFailover.size}, ` +
        `abandoned claims=${stallIds.size}\n`,
    );
    assertLedger(SCENARIO, ledger);
    expect(ledger.accepted).toBe(new Set(producer.offered).size);
  }, 90_000);
});
