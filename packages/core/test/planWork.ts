/**
 * A statement's work from EXPLAIN ANALYZE: the rows every plan node produced and filtered out,
 * times its loops. Row counts, not timings: the same plan gives the same figure on any machine.
 */
import { escapeLiteral, type Client } from 'pg';

interface PlanNode {
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Join Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

type Explained = { 'QUERY PLAN': [{ Plan: PlanNode }] };

/** Rows produced and discarded by every node of a plan, times their loops. */
function work(node: PlanNode): number {
  const perLoop =
    (node['Actual Rows'] ?? 0) +
    (node['Rows Removed by Filter'] ?? 0) +
    (node['Rows Removed by Join Filter'] ?? 0) +
    (node['Rows Removed by Index Recheck'] ?? 0);
  const own = perLoop * (node['Actual Loops'] ?? 1);
  return own + (node.Plans ?? []).reduce((total, child) => total + work(child), 0);
}

/** A value as an SQL literal (EXECUTE takes no bound parameters): numbers, text, text arrays, null. */
function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return escapeLiteral(`{${value.map((v) => `"${String(v)}"`).join(',')}}`);
  return escapeLiteral(String(value));
}

/**
 * 'custom': planned with the values, as an unnamed statement is. 'generic': planned without them,
 * as a named (prepared) statement may be from its sixth execution on (plan_cache_mode
 * force_generic_plan; pg_prepared_statements confirms the plan was generic).
 */
export type PlanKind = 'custom' | 'generic';

/** Runs `text` once under EXPLAIN ANALYZE, in a transaction rolled back; returns its work. */
export async function planWork(
  client: Client,
  text: string,
  values: readonly unknown[],
  plan: PlanKind = 'custom',
): Promise<number> {
  let prepared = false;
  await client.query('BEGIN');
  try {
    if (plan === 'custom') {
      const explained = await client.query<Explained>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, [...values]);
      return work(explained.rows[0]!['QUERY PLAN'][0].Plan);
    }
    await client.query('SET LOCAL plan_cache_mode = force_generic_plan');
    await client.query(`PREPARE plan_work AS ${text}`);
    prepared = true;
    const explained = await client.query<Explained>(
      `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE plan_work(${values.map(literal).join(', ')})`,
    );
    const plans = await client.query<{ generic_plans: string; custom_plans: string }>(
      `SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = 'plan_work'`,
    );
    if (plans.rows[0]?.generic_plans !== '1' || plans.rows[0].custom_plans !== '0') {
      throw new Error(`not a generic plan: ${JSON.stringify(plans.rows[0])}`);
    }
    return work(explained.rows[0]!['QUERY PLAN'][0].Plan);
  } finally {
    await client.query('ROLLBACK');
    if (prepared) await client.query('DEALLOCATE plan_work');
  }
}
