import { CLAIM_SQL } from '../../src/inbox/sql/claim';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message } from './helpers';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

describe('inbox claims across consumers', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it('claims by due time, so a backlog on one consumer does not starve a consumer whose name sorts later', async () => {
    const order: string[] = [];
    const record = (name: string) => async (payload: Readonly<Record<string, unknown>>) => {
      order.push(`${name}${String(payload.n)}`);
    };
    const inbox = makeInbox(t.prisma, {
      worker: { concurrency: 1 },
      handlers: { 'a-backlog': record('a'), 'z-late': record('z') },
    });
    const inputs = [1, 2, 3].map((n) => message({ consumer: 'a-backlog', payload: { n } }));
    inputs.push(message({ consumer: 'z-late', payload: { n: 1 } }));
    inputs.push(...[4, 5, 6].map((n) => message({ consumer: 'a-backlog', payload: { n } })));
    const results = await inbox.acceptMany(inputs);
    const ids = results.map((r) => (r as { id: string }).id);
    // Due times in offer order, one second apart, all in the past.
    await t.db.execute(
      `UPDATE ferry_inbox_receipts r SET next_attempt_at = now() - interval '1 hour' + o.n * interval '1 second'
       FROM unnest($1::uuid[]) WITH ORDINALITY AS o(id, n) WHERE r.id = o.id`,
      [ids],
    );
    for (let i = 0; i < inputs.length; i += 1) expect(await inbox.runOnce()).toMatchObject({ completed: 1 });
    expect(order).toEqual(['a1', 'a2', 'a3', 'z1', 'a4', 'a5', 'a6']);
  });

  it('plans the due-work claim on the (consumer, next_attempt_at) index, without a sequential scan', async () => {
    await t.db.execute(
      `INSERT INTO ferry_inbox_receipts (tenant_id, consumer, message_id, payload, payload_fingerprint, payload_bytes,
         max_attempts, status, next_attempt_at)
       SELECT 'acme', 'plan-' || (g % 20), 'plan-' || g, '{}'::jsonb, 'f', 2, 8,
              CASE WHEN g % 4 = 0 THEN 'COMPLETED' ELSE 'PENDING' END, now() - g * interval '1 second'
       FROM generate_series(1, 20000) g`,
    );
    await t.db.execute('ANALYZE ferry_inbox_receipts');
    const [row] = await t.db.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
      `EXPLAIN (FORMAT JSON) ${CLAIM_SQL}`,
      [['plan-1', 'plan-2', 'plan-3'], 4, 30_000, 8],
    );
    const plan = nodes(row!['QUERY PLAN'][0]!.Plan);
    const onReceipts = plan.filter((n) => n['Relation Name'] === 'ferry_inbox_receipts');
    expect(onReceipts.some((n) => n['Index Name'] === 'ferry_inbox_receipts_due')).toBe(true);
    expect(onReceipts.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
  });
});
