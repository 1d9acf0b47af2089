/**
 * The inbox claim's work is bounded by its batch, not by the receipts table (due backlog and
 * completed history), on the custom plans of unnamed statements and on the generic plan a named
 * statement (fromPg, or Prisma with ferryStatementNames) may switch to after five executions,
 * also when statistics predate the rows. "Work" as in the outbox's test/outbox/claimCost.test.ts
 * (planWork): rows every plan node produced and filtered out, times its loops.
 */
import { Client } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { CLAIM_SQL } from '../../src/inbox/sql/claim';
import type { TestDatabase } from '../../../../test-support/database';
import { costDatabase } from '../costDatabase';
import { planWork, type PlanKind } from '../planWork';

const LIMIT = 100;

let t: TestDatabase;
beforeAll(async () => {
  t = await costDatabase('ferry_inbox_receipts');
});
afterAll(() => t.drop());

/**
 * `backlog` receipts over four consumers, due in the past, half of them COMPLETED; one claim of
 * LIMIT across the four, rolled back. Statistics 'fresh': analyzed with the backlog in place;
 * 'empty': analyzed before it arrived.
 */
async function inboxClaim(backlog: number, statistics: 'fresh' | 'empty', plan: PlanKind) {
  await t.db.execute('TRUNCATE ferry_inbox_receipts');
  if (statistics === 'empty') await t.db.execute('ANALYZE ferry_inbox_receipts');
  await t.db.execute(
    `INSERT INTO ferry_inbox_receipts (tenant_id, consumer, message_id, payload, payload_fingerprint,
       payload_bytes, max_attempts, status, next_attempt_at)
     SELECT 'acme', 'c-' || (g % 4), 'm-' || g, '{}'::jsonb, 'f', 2, 8,
            CASE WHEN g % 2 = 0 THEN 'COMPLETED' ELSE 'PENDING' END, now() - g * interval '1 ms'
     FROM generate_series(1, $1::int) g`,
    [backlog],
  );
  if (statistics === 'fresh') await t.db.execute('ANALYZE ferry_inbox_receipts');
  const explainer = listened(new Client({ connectionString: t.url }));
  await explainer.connect();
  try {
    return await planWork(explainer, CLAIM_SQL, [['c-0', 'c-1', 'c-2', 'c-3'], LIMIT, 30_000, 8], plan);
  } finally {
    await explainer.end();
  }
}

describe.each(['custom', 'generic'] as const)('inbox claim cost (%s plans)', (plan) => {
  it.each([['fresh'], ['empty']] as const)(
    'does not grow with the table, statistics %s',
    async (statistics) => {
      const small = await inboxClaim(2_000, statistics, plan);
      const large = await inboxClaim(20_000, statistics, plan);
      expect(small).toBeGreaterThan(LIMIT);
      // Ten times the backlog: the same work, give or take a B-tree level (not ten times more).
      expect(large).toBeLessThan(small * 1.5);
    },
    120_000,
  );
});
