import path from 'node:path';
import { findUp, recreateDatabase } from '@ferry/testing';

/** Recreates the example's database so every run starts empty: ferry's migrations, then ours. */
export async function freshDatabase(databaseUrl: string): Promise<void> {
  const migrations = path.join(findUp(__dirname, 'migrations'), 'migrations');
  await recreateDatabase(databaseUrl, { migrationsDirs: [migrations] });
}
