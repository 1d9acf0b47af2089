import { Pool } from 'pg';
import { fromPg, type SqlExecutor } from '@ferry/core';

export const DEFAULT_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/test';

/** --database-url, else FERRY_DATABASE_URL, else DATABASE_URL, else the local test database. */
export function databaseUrl(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  return flag ?? env.FERRY_DATABASE_URL ?? env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
}

export async function withDatabase<T>(url: string, work: (db: SqlExecutor) => Promise<T>): Promise<T> {
  const pool = new Pool({ connectionString: url, max: 2 });
  try {
    return await work(fromPg(pool));
  } finally {
    await pool.end();
  }
}
