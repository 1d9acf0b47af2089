/**
 * Settling and the ledgers of the hostile-input suite. Valid messages go through the standard
 * ledger (harness/ledger.ts: offered, accepted, effects; lost, appliedTwice and stuck must be 0);
 * hostile ones through a second line: offered, dead-lettered with the expected reason, with a
 * wrong reason, missing (never dead-lettered), and valid messages dead-lettered by mistake.
 */
import type { SqlExecutor } from '@ferry/core';
import { INBOX_TABLE } from '@ferry/core';
import { assertLedger } from '../harness/ledger';
import { inboxLedger, settle, type Counters } from '../broker-recovery/support';
import type { WireMessage } from './traffic';

/** A dead letter as read back from the broker: the case it carries and its reject reason. */
export interface DeadLetterSeen {
  readonly caseId: string | undefined;
  readonly reason: string | undefined;
}

export interface HostileLedger {
  offered: number;
  deadLettered: number;
  wrongReason: number;
  missing: number;
  validDeadLettered: number;
}

/** Bound on how long after the last publish every valid message must be completed. */
export const SETTLE_MS = 60_000;

export function validIds(traffic: readonly WireMessage[]): string[] {
  return [...new Set(traffic.filter((m) => m.expect === 'accepted').map((m) => m.messageId!))];
}

export function hostileLedger(
  traffic: readonly WireMessage[],
  dead: readonly DeadLetterSeen[],
): HostileLedger {
  const byCase = new Map(dead.map((d) => [d.caseId, d.reason]));
  const firstValid = traffic[0]!.caseId;
  const ledger: HostileLedger = {
    offered: 0,
    deadLettered: 0,
    wrongReason: 0,
    missing: 0,
    validDeadLettered: 0,
  };
  const wrong: string[] = [];
  for (const message of traffic) {
    if (message.expect === 'accepted') continue;
    ledger.offered += 1;
    let reason = byCase.get(message.caseId);
    // An unordered queue (SQS) may deliver the conflicting copy first: then the valid original is the one refused.
    if (reason === undefined && message.hostile === 'same_id_other_body') reason = byCase.get(firstValid);
    if (reason === undefined) ledger.missing += 1;
    else if (reason === message.expect) ledger.deadLettered += 1;
    else {
      ledger.wrongReason += 1;
      wrong.push(`${message.hostile}: ${reason} (expected ${message.expect})`);
    }
  }
  const validCases = new Set(traffic.filter((m) => m.expect === 'accepted').map((m) => m.caseId));
  ledger.validDeadLettered = dead.filter(
    (d) =>
      d.caseId !== undefined &&
      validCases.has(d.caseId) &&
      !(d.caseId === firstValid && d.reason === 'fingerprint_conflict'),
  ).length;
  if (wrong.length > 0) process.stdout.write(`wrong reasons: ${wrong.join('; ')}\n`);
  return ledger;
}

/**
 * Waits (bounded) until every valid message is COMPLETED and `expectedDead` dead letters were
 * read, then prints both ledgers and fails unless nothing was lost, applied twice, stuck, missing
 * or dead-lettered with a wrong reason.
 */
export async function settleAndAssert(
  scenario: string,
  db: SqlExecutor,
  consumer: string,
  traffic: readonly WireMessage[],
  counters: Counters,
  readDeadLetters: () => Promise<readonly DeadLetterSeen[]>,
): Promise<void> {
  const ids = validIds(traffic);
  const expectedDead = traffic.filter((m) => m.expect !== 'accepted').length;
  await settle(
    `${scenario}: every valid message completed`,
    async () => (await completedCount(db, consumer, ids)) === ids.length,
    SETTLE_MS,
  );
  let dead: readonly DeadLetterSeen[] = [];
  await settle(
    `${scenario}: ${expectedDead} dead letters`,
    async () => {
      dead = await readDeadLetters();
      return dead.length >= expectedDead;
    },
    SETTLE_MS,
  );
  const ledger = await inboxLedger(db, consumer, ids, ids.length, counters);
  const hostile = hostileLedger(traffic, dead);
  process.stdout.write(
    `ledger ${scenario}/hostile: ${Object.entries(hostile)
      .map(([key, value]) => `${key}=${value}`)
      .join(' ')}\n`,
  );
  assertLedger(`${scenario}/valid`, ledger);
  if (hostile.missing + hostile.wrongReason + hostile.validDeadLettered > 0) {
    throw new Error(
      `${scenario}: missing=${hostile.missing} wrongReason=${hostile.wrongReason} validDeadLettered=${hostile.validDeadLettered} (see the ledger above)`,
    );
  }
  if (ledger.accepted !== ids.length)
    throw new Error(`${scenario}: ${ledger.accepted} receipts for ${ids.length} valid messages`);
}

async function completedCount(db: SqlExecutor, consumer: string, ids: readonly string[]): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${INBOX_TABLE} WHERE consumer = $1 AND status = 'COMPLETED' AND message_id = ANY($2)`,
    [consumer, ids],
  );
  return row?.n ?? 0;
}
