/**
 * An executor that counts the work of every statement run through it (planWork), for tests that
 * bound a statement's cost by row counts rather than time.
 */
import { Client } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import type { SqlExecutor } from '@ferry/core';
import { planWork, type PlanKind } from './planWork';

export interface Measured {
  /** `base`, except that each statement's work is measured first. */
  readonly db: SqlExecutor;
  /** The work of every statement run so far. */
  total(): number;
  /** How many statements ran. */
  statements(): number;
}

/**
 * Before each statement (query or execute), measures its `plan`'s work on `client` (planWork, in
 * a transaction rolled back) and adds it to the total; then runs it for real on `base`.
 */
export function measuring(base: SqlExecutor, client: Client, plan: PlanKind): Measured {
  let total = 0;
  let statements = 0;
  const measure = async (text: string, values: readonly unknown[]): Promise<void> => {
    statements += 1;
    total += await planWork(client, text, values, plan);
  };
  const db: SqlExecutor = {
    ...base,
    query: async <T>(text: string, values: readonly unknown[] = []) => {
      await measure(text, values);
      return base.query<T>(text, values);
    },
    execute: async (text: string, values: readonly unknown[] = []) => {
      await measure(text, values);
      return base.execute(text, values);
    },
  };
  return { db, total: () => total, statements: () => statements };
}

/**
 * Runs `run` on an executor over `base` that measures the work of its statements under `plan`,
 * explained from a new session on `url`: it plans with the table's size and statistics as arranged.
 */
export async function measureWork<T>(
  url: string,
  base: SqlExecutor,
  plan: PlanKind,
  run: (db: SqlExecutor) => Promise<T>,
): Promise<{ work: number; result: T }> {
  const explainer = listened(new Client({ connectionString: url }));
  await explainer.connect();
  try {
    const measured = measuring(base, explainer, plan);
    const result = await run(measured.db);
    return { work: measured.total(), result };
  } finally {
    await explainer.end();
  }
}
