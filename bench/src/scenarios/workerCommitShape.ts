import { randomUUID } from 'node:crypto';
import { fromPrisma } from '@ferry/core';
import { beginHandler } from '../../../packages/core/src/inbox/sql/beginHandler';
import { completeReceipt } from '../../../packages/core/src/inbox/sql/complete';
import type { TestDatabase } from '../../../test-support/database';
import { PRISMA_LABEL, benchDatabase, chunks } from '../env';
import { CONSUMER, TENANT, countRows, openInbox, type Tx } from '../inbox';
import { payload } from '../outbox';
import { timed, type Sample, type Scenario, type ScenarioInstance } from '../runner';

const LANES = 4;
const INSERT = 'INSERT INTO bench_rows (message_id, amount_cents) VALUES ($1, $2)';
const LIMITS = { lockTimeoutMs: 1_000, transactionTimeoutMs: 10_000 } as const;

/**
 * A design probe, not ferry's code: the fenced completion moved to COMMIT. The handler
 * transaction's first statement records a pending completion in an unlogged side table; a
 * deferred constraint trigger on it completes the receipt at COMMIT with the same fence, and fails
 * the COMMIT (so the handler's writes) when the claim is gone. One round trip fewer per message.
 */
const COMMIT_TRIGGER = [
  `CREATE UNLOGGED TABLE bench_pending_completions (
     receipt_id uuid NOT NULL, claim_token uuid NOT NULL, PRIMARY KEY (receipt_id, claim_token))`,
  `CREATE FUNCTION bench_complete_at_commit() RETURNS trigger LANGUAGE plpgsql AS $f$
   BEGIN
     UPDATE ferry_inbox_receipts SET status = 'COMPLETED', completed_at = now(), lease_expires_at = NULL,
       row_version = row_version + 1, updated_at = now()
     WHERE id = NEW.receipt_id AND status = 'PROCESSING' AND claim_token = NEW.claim_token
       AND lease_expires_at > clock_timestamp();
     IF NOT FOUND THEN RAISE EXCEPTION 'claim lost' USING ERRCODE = 'P0001'; END IF;
     DELETE FROM bench_pending_completions WHERE receipt_id = NEW.receipt_id AND claim_token = NEW.claim_token;
     RETURN NULL;
   END $f$`,
  `CREATE CONSTRAINT TRIGGER bench_complete_at_commit AFTER INSERT ON bench_pending_completions
     DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bench_complete_at_commit()`,
];

/** beginHandler's checks and settings, plus the pending completion when the claim is owned. */
const BEGIN_PENDING = `
  WITH owned AS (
    SELECT pg_try_advisory_xact_lock_shared(hashtextextended('ferry_inbox_receipt:' || $1::uuid::text, 0))
      AND EXISTS (SELECT 1 FROM ferry_inbox_receipts WHERE id = $1::uuid AND status = 'PROCESSING'
        AND claim_token = $2::uuid AND lease_expires_at > clock_timestamp()) AS ok
  ), pending AS (
    INSERT INTO bench_pending_completions (receipt_id, claim_token)
    SELECT $1::uuid, $2::uuid WHERE (SELECT ok FROM owned) RETURNING 1
  )
  SELECT set_config('lock_timeout', $3, true) AS lock_timeout,
         set_config('statement_timeout', $4, true) AS statement_timeout,
         current_setting('transaction_isolation') AS isolation,
         EXISTS (SELECT 1 FROM pending) AS owned`;

interface Claim {
  readonly id: string;
  readonly claimToken: string;
  readonly amountCents: number;
}

type Shape = (tx: Tx, claim: Claim) => Promise<void>;

/** Today's handler transaction: the claim check, the handler's insert, the fenced completion. */
const today: Shape = async (tx, claim) => {
  const db = fromPrisma(tx);
  if (!(await beginHandler(db, claim, LIMITS)).owned) throw new Error(`${claim.id}: claim not owned`);
  await tx.$executeRawUnsafe(INSERT, claim.id, claim.amountCents);
  if ((await completeReceipt(db, claim.id, claim.claimToken)) !== 'completed')
    throw new Error(`${claim.id}: completion refused`);
};

/** The probe: the check and the pending completion in one statement, completed at COMMIT. */
const atCommit: Shape = async (tx, claim) => {
  const [row] = await fromPrisma(tx).query<{ owned: boolean }>(BEGIN_PENDING, [
    claim.id,
    claim.claimToken,
    `${LIMITS.lockTimeoutMs}ms`,
    `${LIMITS.transactionTimeoutMs}ms`,
  ]);
  if (row?.owned !== true) throw new Error(`${claim.id}: claim not owned`);
  await tx.$executeRawUnsafe(INSERT, claim.id, claim.amountCents);
};

/** `n` receipts accepted and claimed (not timed), run through `shape` on 4 lanes until all COMPLETED. */
async function drain(database: TestDatabase, accept: (n: number) => Promise<void>, shape: Shape, n: number) {
  await accept(n);
  const claims = await database.prisma.$queryRawUnsafe<Claim[]>(
    `UPDATE ferry_inbox_receipts SET status = 'PROCESSING', claim_token = gen_random_uuid(),
       lease_expires_at = now() + interval '1 hour', attempts = 1, lifetime_attempts = 1
     RETURNING id::text AS id, claim_token::text AS "claimToken", (payload->>'amountCents')::int AS "amountCents"`,
  );
  const sample = await timed(async () => {
    let next = 0;
    const lane = async () => {
      while (next < claims.length) {
        const claim = claims[next++]!;
        await database.prisma.$transaction((tx) => shape(tx, claim));
      }
    };
    await Promise.all(Array.from({ length: LANES }, lane));
    return { ops: claims.length, verified: true };
  });
  const rows = await countRows(database.prisma, 'bench_rows');
  const done = await countRows(database.prisma, 'ferry_inbox_receipts', "WHERE status = 'COMPLETED'");
  return { ...sample, verified: sample.ops === n && rows === n && done === n };
}

/**
 * The probe keeps the fence (else the comparison is unfair): a claim taken over while its handler
 * ran fails the COMMIT, and the handler's insert is rolled back.
 */
async function fenceHolds(database: TestDatabase, accept: (n: number) => Promise<void>): Promise<void> {
  await accept(1);
  const [claim] = await database.prisma.$queryRawUnsafe<Claim[]>(
    `UPDATE ferry_inbox_receipts SET status = 'PROCESSING', claim_token = gen_random_uuid(),
       lease_expires_at = now() + interval '1 hour'
     RETURNING id::text AS id, claim_token::text AS "claimToken", 1 AS "amountCents"`,
  );
  if (!claim) throw new Error('worker-commit-shape: no receipt to claim');
  const committed = await database.prisma
    .$transaction(async (tx) => {
      await atCommit(tx, claim);
      await database.prisma.$executeRawUnsafe(
        `UPDATE ferry_inbox_receipts SET claim_token = gen_random_uuid() WHERE id = $1::uuid`,
        claim.id,
      );
    })
    .then(
      () => true,
      () => false,
    );
  if (committed || (await countRows(database.prisma, 'bench_rows')) !== 0)
    throw new Error('worker-commit-shape: the probe committed a handler whose claim was taken over');
}

/**
 * The inbox handler transaction's shape alone, on Prisma, 4 lanes, receipts claimed beforehand
 * (no worker, no lease kit): baseline today's three ferry statements around the handler's insert
 * (`beginHandler`, insert, `completeReceipt`: 5 round trips with BEGIN and COMMIT), subject the
 * completion moved to COMMIT by a deferred constraint trigger (4 round trips). Evidence for issue
 * 13's open design decision; ferry does not ship the subject.
 */
export const workerCommitShape: Scenario = {
  name: 'worker-commit-shape',
  unit: 'completions/s',
  better: 'higher',
  baselineLabel: `today's handler transaction (check, insert, fenced completion) on ${PRISMA_LABEL}, 4 lanes`,
  subjectLabel: 'probe: check + pending completion, insert, completion by a deferred trigger at COMMIT',
  async open(): Promise<ScenarioInstance> {
    const database = await benchDatabase();
    await database.prisma.$executeRawUnsafe(
      'CREATE TABLE bench_rows (message_id text PRIMARY KEY, amount_cents integer NOT NULL)',
    );
    for (const statement of COMMIT_TRIGGER) await database.prisma.$executeRawUnsafe(statement);
    const acceptor = await openInbox(database.prisma);
    const accept = async (n: number) => {
      await database.prisma.$executeRawUnsafe('TRUNCATE bench_rows, ferry_inbox_receipts');
      const inputs = Array.from({ length: n }, (_, i) => ({
        consumer: CONSUMER,
        tenantId: TENANT,
        messageId: randomUUID(),
        payload: payload(i),
      }));
      for (const batch of chunks(inputs, 500)) await acceptor.acceptMany(batch);
    };
    await fenceHolds(database, accept);
    return {
      baseline: (n): Promise<Sample> => drain(database, accept, today, n),
      subject: (n): Promise<Sample> => drain(database, accept, atCommit, n),
      async close() {
        await acceptor.close();
        await database.drop();
      },
    };
  },
};
