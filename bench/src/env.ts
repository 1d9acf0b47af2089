import { randomBytes } from 'node:crypto';
import { OUTBOX_DEFAULTS, ferryStatementNames, type OnSent } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../test-support/database';

/** Service addresses, with the same defaults and variables as the tests (test-support/env.js). */
export const SERVICES = {
  amqpUrl: process.env.FERRY_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
  kafkaBrokers: (process.env.FERRY_KAFKA_BROKERS ?? '127.0.0.1:9092').split(','),
  sqsEndpoint: process.env.FERRY_SQS_ENDPOINT ?? 'http://127.0.0.1:9324',
} as const;

/** A queue / topic name unique to this run and call. */
export function uniqueName(prefix: string): string {
  return `ferry-bench-${prefix}-${randomBytes(4).toString('hex')}`;
}

export function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Relay batch size and the baselines' batch size (the same, so both send the same batches): the
 * relay's default unless `BENCH_BATCH` overrides.
 */
export const BATCH_SIZE = positiveInteger('BENCH_BATCH', OUTBOX_DEFAULTS.batchSize.default);

/**
 * The relay's `onSent` in the relay scenarios (relayRun): `BENCH_SENT=delete` deletes each sent
 * event at its completion instead of keeping it as SENT; unset or `keep`, the relay's default.
 */
export const SENT: OnSent = sentMode(process.env.BENCH_SENT);

function sentMode(raw: string | undefined): OnSent {
  if (raw === undefined || raw === '' || raw === 'keep') return 'keep';
  if (raw === 'delete') return 'delete';
  throw new Error(`BENCH_SENT must be keep or delete, got "${raw}"`);
}

/**
 * The bench's Prisma clients are built as packages/core/README.md recommends ("Prepared
 * statements on Prisma"): PrismaPg with `statementNameGenerator: ferryStatementNames`, so ferry's
 * own statements are prepared and the application's (the baselines') are not. BENCH_PRISMA_NAMES=0
 * builds them without it.
 */
export const PRISMA_NAMES = process.env.BENCH_PRISMA_NAMES !== '0';

/** How ferry's statements run on the bench's Prisma clients, for the scenario labels. */
export const PRISMA_LABEL = PRISMA_NAMES ? 'Prisma, ferry statements prepared' : 'Prisma, unnamed statements';

/** A fresh migrated database whose Prisma clients are built as PRISMA_NAMES says. */
export function benchDatabase(): Promise<TestDatabase> {
  return createTestDatabase(PRISMA_NAMES ? { adapter: { statementNameGenerator: ferryStatementNames } } : {});
}
