/**
 * Review 142: hostile option objects at every public entry point of @ferry/core that takes
 * options. Each is given a valid options object reshaped as an application could hand it over
 * (a getter that throws, a Proxy whose traps throw, a revoked Proxy, a null prototype, a class
 * with inherited options, frozen or sealed, a getter answering differently on each read) and
 * must answer FerryConfigError naming the option, never a raw TypeError or the trap's own error;
 * and it must read each option once: a value checked on one read is never used from another.
 */
import {
  FerryConfigError,
  createAuditLog,
  createEmitter,
  createHealth,
  createInbox,
  createInboxTenancyContext,
  createOutboxAdmin,
  createRedactor,
  createRelay,
  checkSchema,
  exportSql,
  migrate,
  type SqlExecutor,
} from '@ferry/core';
import { createFerryMetrics, serveMetrics } from '@ferry/core/metrics';
import { Registry } from 'prom-client';
import { hostileShapes, runEntryPoint, type EntryPoint } from '../../../test-support/hostileOptions';

/** A database no statement reaches: each call rejects with this error, which means the options passed. */
const UNREACHED = new Error('the options were accepted: a statement was sent');
const db: SqlExecutor = {
  inTransaction: false,
  query: () => Promise.reject(UNREACHED),
  execute: () => Promise.reject(UNREACHED),
  transaction: () => Promise.reject(UNREACHED),
};
const prisma = {
  $transaction: () => Promise.reject(UNREACHED),
  $queryRawUnsafe: () => Promise.reject(UNREACHED),
  $executeRawUnsafe: () => Promise.reject(UNREACHED),
};
const publisher = { publish: () => Promise.resolve([]) };
const observer = (): void => undefined;

/**
 * Passed when it resolves or rejects with UNREACHED, as it is or within ferry's error
 * (the options were taken, a statement followed).
 */
const reachedDatabase = async (result: unknown): Promise<void> => {
  await Promise.resolve(result).catch((error: unknown) => {
    if (!String((error as Error | null)?.message).includes(UNREACHED.message)) throw error;
  });
};

const ENTRY_POINTS: readonly EntryPoint[] = [
  {
    name: 'createRelay',
    call: (options) => createRelay(options as never),
    base: () => ({ db, publisher, observer, options: { pollInterval: 500 } }),
    key: 'publisher',
    bad: 'not a publisher',
    nested: ['options'],
  },
  {
    name: 'createRelay options',
    call: (options) => createRelay({ db, publisher, options: options as never }),
    base: () => ({
      pollInterval: 500,
      lease: { duration: 30_000 },
      circuit: { openMs: 1_000 },
      retry: { initialDelay: 100 },
    }),
    key: 'pollInterval',
    bad: '500',
    nested: ['lease', 'circuit', 'retry'],
  },
  {
    name: 'createEmitter',
    call: (options) => createEmitter(options as never),
    base: () => ({ retry: { maxRetries: 3 }, statementTimeoutMs: 5_000, observer }),
    key: 'retry',
    bad: 'three',
    nested: ['retry'],
  },
  {
    name: 'createInbox',
    call: (options) => createInbox(prisma as never, options as never),
    base: () => ({ handlers: { orders: () => undefined }, worker: { enabled: false }, observer }),
    key: 'observer',
    bad: 'not a function',
    nested: ['worker', 'handlers'],
  },
  {
    name: 'createHealth',
    call: (options) => createHealth(options as never),
    base: () => ({ db, maxCycleAgeMs: 60_000, inboxThresholds: { maxDead: 0 } }),
    key: 'db',
    bad: 'postgres://localhost/db',
    nested: ['inboxThresholds'],
  },
  {
    name: 'createFerryMetrics',
    call: (options) => createFerryMetrics(options as never),
    base: () => ({ registry: new Registry(), prefix: 'review142_', maxLabelValues: 50 }),
    key: 'registry',
    bad: { metrics: 'no function' },
  },
  {
    name: 'serveMetrics',
    call: (options) => serveMetrics(options as never),
    base: () => ({ registry: new Registry(), port: 0, host: '127.0.0.1' }),
    key: 'registry',
    bad: {},
  },
  {
    name: 'createRedactor',
    path: 'redact',
    prefix: 'redact.',
    call: (options) => createRedactor(options as never),
    base: () => ({ allow: ['orderId'], keys: ['cardNumber'] }),
    key: 'keys',
    bad: 'cardNumber',
  },
  {
    name: 'createInboxTenancyContext',
    path: 'tenancy',
    prefix: 'tenancy.',
    call: (options) => createInboxTenancyContext(options as never),
    base: () => ({ setting: 'app.tenant_id', global: 'shared' }),
    key: 'global',
    bad: 'everyone',
  },
  {
    name: 'createOutboxAdmin',
    call: (options) => createOutboxAdmin(db, options as never),
    base: () => ({ statementTimeoutMs: 5_000 }),
    key: 'statementTimeoutMs',
    bad: -1,
  },
  {
    name: 'createAuditLog',
    call: (options) => createAuditLog(db, options as never),
    base: () => ({ statementTimeoutMs: 5_000 }),
    key: 'statementTimeoutMs',
    bad: '5000',
  },
  {
    name: 'migrate',
    call: (options) => migrate(db, options as never),
    base: () => ({ timeoutMs: 10_000, lockTimeoutMs: 1_000 }),
    key: 'lockTimeoutMs',
    bad: 0,
    accepted: reachedDatabase,
  },
  {
    name: 'checkSchema',
    call: (options) => checkSchema(db, options as never),
    base: () => ({ requireAllMigrations: false, statementTimeoutMs: 5_000 }),
    key: 'statementTimeoutMs',
    bad: 'soon',
    accepted: reachedDatabase,
  },
  {
    name: 'exportSql',
    call: (options) => exportSql(options as never),
    base: () => ({ after: '0001_outbox' }),
    key: 'after',
    bad: '',
    accepted: () => undefined,
  },
];

describe.each(ENTRY_POINTS)('$name', (entry) => {
  test.each(hostileShapes(entry))('%s', async (_what, check) => {
    await check(entry);
  });

  test('a refused options object leaves nothing running', async () => {
    // Immediates come and go with the test runner; a timer or socket left behind stays.
    const held = () =>
      process
        .getActiveResourcesInfo()
        .filter((name) => name !== 'Immediate')
        .sort();
    const before = held();
    for (const [, check] of hostileShapes(entry).filter(([what]) => what.startsWith('refused:'))) {
      await check(entry);
    }
    expect(held()).toEqual(before);
  });
});

test('createInbox: a handler whose getter flips is run as checked (read once)', async () => {
  let reads = 0;
  const handlers = {
    get orders(): unknown {
      reads += 1;
      return reads === 1 ? () => undefined : 'not a handler';
    },
  };
  await runEntryPoint(ENTRY_POINTS[3]!, { handlers, worker: { enabled: false } });
  expect(reads).toBe(1);
});

test('the refusal names the option and is no TypeError', () => {
  const error = (() => {
    try {
      createEmitter({
        get statementTimeoutMs(): number {
          throw new TypeError("Cannot read properties of undefined (reading 'x')");
        },
      });
    } catch (thrown) {
      return thrown;
    }
    return undefined;
  })();
  expect(error).toBeInstanceOf(FerryConfigError);
  expect((error as FerryConfigError).option).toBe('statementTimeoutMs');
  expect((error as Error).message).toMatch(/invalid option statementTimeoutMs: cannot be read: it threw/);
});
