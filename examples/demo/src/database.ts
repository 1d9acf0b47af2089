import { existsSync } from 'node:fs';
import path from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import { Client } from 'pg';
import { fromPrisma, migrate } from '@ferry/core';
import { PrismaClient } from '../generated/prisma/client';

/** The demo's folder (holding prisma/ and migrations/), from src/ or dist/src/. */
function demoRoot(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'migrations')) && existsSync(path.join(dir, 'prisma'))) return dir;
  }
  throw new Error(`examples/demo not found above ${__dirname}`);
}

/** Recreates the demo database so every run starts empty, then applies both sets of migrations. */
export async function freshDatabase(databaseUrl: string): Promise<PrismaClient> {
  const url = new URL(databaseUrl);
  const name = url.pathname.slice(1);
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unsafe demo database name: ${name}`);
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    // Identifiers cannot be bound as parameters; the name was checked above.
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl, max: 16 }) });
  try {
    const db = fromPrisma(prisma);
    await migrate(db);
    // The application's own migrations (its orders table), applied by the same migrator.
    await migrate(db, { migrationsDir: path.join(demoRoot(), 'migrations') });
    return prisma;
  } catch (error) {
    await prisma.$disconnect();
    throw error;
  }
}
