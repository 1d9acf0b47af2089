import path from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import { findUp, recreateDatabase } from '@ferry/testing';
import { PrismaClient } from '../generated/prisma/client';

/** Recreates the demo database so every run starts empty (ferry's migrations, then the demo's). */
export async function freshDatabase(databaseUrl: string): Promise<PrismaClient> {
  const migrations = path.join(findUp(__dirname, 'migrations'), 'migrations');
  await recreateDatabase(databaseUrl, { migrationsDirs: [migrations] });
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl, max: 16 }) });
}
