import {
  checkSchema,
  createAuditLog,
  createEmitter,
  createHealth,
  createInbox,
  createInboxTenancyContext,
  createOutboxAdmin,
  createRedactor,
  createRelay,
  exportSql,
  fromPg,
  fromPrisma,
  InboxAdmin,
  InboxPrivilegedAdmin,
  interactiveTransaction,
  migrate,
  pgTransactions,
  prismaTransactions,
  type SqlExecutor,
} from '@ferry/core';
import { Client } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { createFerryMetrics, serveMetrics } from '@ferry/core/metrics';
import { awaitReady } from '@ferry/core/transport';
import { describeOptionTable, misspelt, wrongType } from '../../../../test-support/optionTables';

/**
 * Every public entry point of @ferry/core that takes an options object, with a misspelt key and
 * a wrongly typed value: each is refused with FERRY_CONFIG_INVALID naming the option's path,
 * before any statement (the database below answers nothing).
 */
const unreachable = async (): Promise<never> => {
  throw new Error('the options should have been refused before any statement');
};
const db = {
  inTransaction: false,
  query: unreachable,
  execute: unreachable,
  transaction: unreachable,
} as unknown as SqlExecutor;
const publisher = { publish: async () => [] };
const registry = { metrics: async () => '', contentType: 'text/plain' } as never;
const never = new AbortController().signal;
/** A NestJS Logger's shape: log / warn / error / debug / verbose, no info. */
const nestLikeLogger = { log() {}, warn() {}, error() {}, debug() {}, verbose() {} };
/** createEmitter's options are checked in outbox/emit.ts, being changed elsewhere (deadline options). */
describe('a misspelt option key is refused, naming its path', () => {
  describeOptionTable([
    misspelt('createRelay', 'pollIntervall', () => createRelay({ db, publisher, pollIntervall: 5 } as never)),
    misspelt('createRelay options', 'pollIntervall', () =>
      createRelay({ db, publisher, options: { pollIntervall: 5 } as never }),
    ),
    ...['retry', 'lease', 'poisonGuard', 'ordering', 'listen', 'circuit'].map((group) =>
      misspelt(`createRelay options.${group}`, `${group}.typo`, () =>
        createRelay({ db, publisher, options: { [group]: { typo: 1 } } as never }),
      ),
    ),
    misspelt('createRelay options.redact', 'redact.allowed', () =>
      createRelay({ db, publisher, options: { redact: { allowed: [] } } as never }),
    ),
    misspelt('createInbox', 'statementTimeout', () =>
      createInbox({} as never, { statementTimeout: 5 } as never),
    ),
    misspelt('createInbox worker', 'worker.pollInterval', () =>
      createInbox({} as never, { worker: { pollInterval: 5 } } as never),
    ),
    misspelt('createInbox redact', 'redact.allowed', () =>
      createInbox({} as never, { redact: { allowed: [] } } as never),
    ),
    misspelt('createOutboxAdmin', 'statementTimeout', () =>
      createOutboxAdmin(db, { statementTimeout: 5 } as never),
    ),
    misspelt(
      'InboxAdmin',
      'statementTimeoutMS',
      () => new InboxAdmin(db, { statementTimeoutMS: 500 } as never),
    ),
    misspelt(
      'InboxPrivilegedAdmin',
      'statementTimeoutMS',
      () => new InboxPrivilegedAdmin(db, { privilegedAdmin: true, statementTimeoutMS: 500 } as never),
    ),
    misspelt('createAuditLog', 'timeoutMs', () => createAuditLog(db, { timeoutMs: 500 } as never)),
    misspelt('createEmitter', 'retries', () => createEmitter({ retries: 3 } as never)),
    misspelt('createEmitter retry', 'retry.maxRetry', () =>
      createEmitter({ retry: { maxRetry: 3 } } as never),
    ),
    misspelt('createEmitter limits', 'limits.maxPayload', () =>
      createEmitter({ limits: { maxPayload: 3 } } as never),
    ),
    misspelt('createHealth', 'checkTimeout', () => createHealth({ db, checkTimeout: 5 } as never)),
    misspelt('createHealth outboxThresholds', 'outboxThresholds.maxFailures', () =>
      createHealth({ db, outboxThresholds: { maxFailures: 5 } } as never),
    ),
    misspelt('createHealth inboxThresholds', 'inboxThresholds.maxDeads', () =>
      createHealth({ db, inboxThresholds: { maxDeads: 5 } } as never),
    ),
    misspelt('createInboxTenancyContext', 'tenancy.settings', () =>
      createInboxTenancyContext({ settings: 'app.tenant' } as never),
    ),
    misspelt('createRedactor', 'redact.allowed', () => createRedactor({ allowed: [] } as never)),
    misspelt('migrate', 'timeout', () => migrate(db, { timeout: 5 } as never)),
    misspelt('checkSchema', 'requireMigrations', () =>
      checkSchema(db, { requireMigrations: false } as never),
    ),
    misspelt('exportSql', 'since', () => exportSql({ since: 'x' } as never)),
    misspelt('createFerryMetrics', 'prefx', () => createFerryMetrics({ prefx: 'x_' } as never)),
    misspelt('createFerryMetrics stats', 'stats.cacheMS', () =>
      createFerryMetrics({ stats: { db, cacheMS: 5 } } as never),
    ),
    misspelt('serveMetrics', 'prot', () => serveMetrics({ registry, prot: 5 } as never)),
    misspelt('awaitReady', 'timeout', () =>
      awaitReady('x', new Promise(() => {}), never, { timeout: 5 } as never),
    ),
  ]);
});

describe('a wrongly typed option value is refused, naming its path and showing the value', () => {
  describeOptionTable([
    wrongType('createRelay options', 'pollInterval', '"50" (string)', () =>
      createRelay({ db, publisher, options: { pollInterval: '50' as never } }),
    ),
    wrongType('createRelay options.retry', 'retry.maxRetries', 'NaN', () =>
      createRelay({ db, publisher, options: { retry: { maxRetries: Number.NaN } } }),
    ),
    wrongType('createRelay options.lease', 'lease.duration', '-1 (number)', () =>
      createRelay({ db, publisher, options: { lease: { duration: -1 } } }),
    ),
    wrongType('createRelay observer', 'observer', '"log" (string)', () =>
      createRelay({ db, publisher, observer: 'log' as never }),
    ),
    wrongType('createInbox', 'maxPayloadBytes', '"50" (string)', () =>
      createInbox({} as never, { maxPayloadBytes: '50' as never }),
    ),
    wrongType('createInbox worker', 'worker.concurrency', '-1 (number)', () =>
      createInbox({} as never, { worker: { concurrency: -1 } }),
    ),
    wrongType('createInbox observer', 'observer', '"log" (string)', () =>
      createInbox({} as never, { observer: 'log' as never }),
    ),
    wrongType('createOutboxAdmin', 'statementTimeoutMs', '"50" (string)', () =>
      createOutboxAdmin(db, { statementTimeoutMs: '50' as never }),
    ),
    wrongType(
      'InboxAdmin',
      'statementTimeoutMs',
      '"50" (string)',
      () => new InboxAdmin(db, { statementTimeoutMs: '50' as never }),
    ),
    wrongType(
      'InboxPrivilegedAdmin',
      'statementTimeoutMs',
      'NaN',
      () => new InboxPrivilegedAdmin(db, { privilegedAdmin: true, statementTimeoutMs: Number.NaN }),
    ),
    wrongType(
      'InboxPrivilegedAdmin',
      'privilegedAdmin',
      '"true" (string)',
      () => new InboxPrivilegedAdmin(db, { privilegedAdmin: 'true' as never }),
    ),
    wrongType('createAuditLog', 'statementTimeoutMs', '-1 (number)', () =>
      createAuditLog(db, { statementTimeoutMs: -1 }),
    ),
    wrongType('createEmitter retry', 'retry.maxRetries', '"50" (string)', () =>
      createEmitter({ retry: { maxRetries: '50' as never } }),
    ),
    wrongType('createEmitter limits', 'limits.maxPayloadBytes', '"50" (string)', () =>
      createEmitter({ limits: { maxPayloadBytes: '50' as never } }),
    ),
    wrongType('createEmitter observer', 'observer', '"log" (string)', () =>
      createEmitter({ observer: 'log' as never }),
    ),
    wrongType('createHealth', 'checkTimeoutMs', '"50" (string)', () =>
      createHealth({ db, checkTimeoutMs: '50' as never }),
    ),
    wrongType('createHealth', 'maxCycleAgeMs', 'NaN', () => createHealth({ db, maxCycleAgeMs: Number.NaN })),
    wrongType('createHealth', 'checkSchema', '"no" (string)', () =>
      createHealth({ db, checkSchema: 'no' as never }),
    ),
    wrongType('createHealth outboxThresholds', 'outboxThresholds.maxFailed', '-1 (number)', () =>
      createHealth({ db, outboxThresholds: { maxFailed: -1 } }),
    ),
    wrongType('createHealth inboxThresholds', 'inboxThresholds.maxDead', '"50" (string)', () =>
      createHealth({ db, inboxThresholds: { maxDead: '50' as never } }),
    ),
    wrongType('createInboxTenancyContext', 'tenancy.global', '"all" (string)', () =>
      createInboxTenancyContext({ global: 'all' as never }),
    ),
    wrongType('createInboxTenancyContext', 'tenancy.setting', '5 (number)', () =>
      createInboxTenancyContext({ setting: 5 as never }),
    ),
    wrongType('createRedactor', 'redact.keys', '"token" (string)', () =>
      createRedactor({ keys: 'token' as never }),
    ),
    wrongType('migrate', 'timeoutMs', '"50" (string)', () => migrate(db, { timeoutMs: '50' as never })),
    wrongType('migrate', 'lockTimeoutMs', '-1 (number)', () => migrate(db, { lockTimeoutMs: -1 })),
    wrongType('migrate', 'signal', '"stop" (string)', () => migrate(db, { signal: 'stop' as never })),
    wrongType('checkSchema', 'requireAllMigrations', '"no" (string)', () =>
      checkSchema(db, { requireAllMigrations: 'no' as never }),
    ),
    wrongType('exportSql', 'after', '5 (number)', () => exportSql({ after: 5 as never })),
    wrongType('createFerryMetrics stats', 'stats.cacheMs', '"50" (string)', () =>
      createFerryMetrics({ stats: { db, cacheMs: '50' as never } }),
    ),
    wrongType('serveMetrics', 'port', '"50" (string)', () => serveMetrics({ registry, port: '50' as never })),
    wrongType('awaitReady', 'timeoutMs', '"50" (string)', () =>
      awaitReady('x', new Promise(() => {}), never, { timeoutMs: '50' as never }),
    ),
    // A logger without one of pino's four methods loses those lines in guardLogger, silently.
    wrongType('createRelay', 'logger', '"pino" (string)', () =>
      createRelay({ db, publisher, logger: 'pino' as never }),
    ),
    wrongType('createInbox', 'logger', 'missing info()', () =>
      createInbox({} as never, { logger: nestLikeLogger as never }),
    ),
    wrongType('createEmitter', 'logger', 'null', () => createEmitter({ logger: null as never })),
    wrongType('createFerryMetrics', 'logger', 'missing info()', () =>
      createFerryMetrics({ logger: nestLikeLogger as never }),
    ),
  ]);
});

/**
 * A required option given explicitly as `undefined` (a configuration loader's missing field), or
 * of the wrong type, and a required options argument left out: refused at construction with
 * FERRY_CONFIG_INVALID naming the option, never a TypeError at start() or at the first message.
 */
const prismaLike = {
  $transaction: unreachable,
  $queryRawUnsafe: unreachable,
  $executeRawUnsafe: unreachable,
  $disconnect: unreachable,
};
describe('a required option given as undefined or of the wrong type is refused at construction', () => {
  describeOptionTable([
    wrongType('createRelay', 'options', 'got undefined', () => createRelay(undefined as never)),
    wrongType('createRelay', 'db', 'got undefined', () => createRelay({ db: undefined as never, publisher })),
    wrongType('createRelay', 'publisher', 'got undefined', () =>
      createRelay({ db, publisher: undefined as never }),
    ),
    wrongType('createRelay', 'publisher', '"rabbit" (string)', () =>
      createRelay({ db, publisher: 'rabbit' as never }),
    ),
    wrongType('createInbox', 'client', 'got undefined', () => createInbox(undefined as never)),
    wrongType('createInbox', 'client', '"postgres://x" (string)', () => createInbox('postgres://x' as never)),
    wrongType('createInbox', 'client', '{} (object)', () => createInbox({} as never)),
    wrongType('createInbox', 'handlers.work', 'must be a function', () =>
      createInbox(prismaLike as never, { handlers: { work: undefined as never } }),
    ),
    wrongType('createHealth', 'options', 'got undefined', () => createHealth(undefined as never)),
    wrongType('createHealth', 'db', 'got undefined', () => createHealth({ db: undefined as never })),
    // The operator plane: its client is an option of the object built, as createInbox's is.
    ...(
      [
        ['undefined', undefined, 'got undefined'],
        ['null', null, 'got null'],
        ['a connection string', 'postgres://x', '"postgres://x" (string)'],
        ['an object of no client', {}, '{} (object)'],
      ] as const
    ).flatMap(([, value, shows]) => [
      wrongType('createOutboxAdmin', 'client', shows, () => createOutboxAdmin(value as never)),
      wrongType('InboxAdmin', 'client', shows, () => new InboxAdmin(value as never)),
      wrongType(
        'InboxPrivilegedAdmin',
        'client',
        shows,
        () => new InboxPrivilegedAdmin(value as never, { privilegedAdmin: true }),
      ),
      wrongType('createAuditLog', 'executor', shows, () => createAuditLog(value as never)),
    ]),
    // The executors and transaction adapters ferry builds on the application's client.
    ...(
      [
        ['undefined', undefined, 'got undefined'],
        ['null', null, 'got null'],
        ['a connection string', 'postgres://x', '"postgres://x" (string)'],
      ] as const
    ).flatMap(([, value, shows]) => [
      wrongType('fromPg', 'pool', shows, () => fromPg(value as never)),
      wrongType('pgTransactions', 'pool', shows, () => pgTransactions(value as never)),
      wrongType('fromPrisma', 'client', shows, () => fromPrisma(value as never)),
      wrongType('prismaTransactions', 'client', shows, () => prismaTransactions(value as never)),
      wrongType('interactiveTransaction', 'client', shows, () =>
        interactiveTransaction(value as never, async () => undefined),
      ),
      wrongType('migrate', 'db', shows, () => migrate(value as never)),
      wrongType('checkSchema', 'db', shows, () => checkSchema(value as never)),
    ]),
    // An executor with query() but not every method ferry calls on one (execute(), transaction()):
    // refused at construction naming what it lacks, not a TypeError at the first transaction.
    ...(
      [
        ['query() alone', { query: unreachable }, 'missing execute(), transaction()'],
        ['no transaction()', { ...db, transaction: undefined }, 'missing transaction()'],
      ] as const
    ).flatMap(([, value, shows]) => [
      wrongType('createRelay', 'db', shows, () => createRelay({ db: value as never, publisher })),
      wrongType('createHealth', 'db', shows, () => createHealth({ db: value as never })),
      wrongType('createFerryMetrics', 'stats.db', shows, () =>
        createFerryMetrics({ stats: { db: value as never } }),
      ),
      wrongType('migrate', 'db', shows, () => migrate(value as never)),
      wrongType('checkSchema', 'db', shows, () => checkSchema(value as never)),
      wrongType('prismaTransactions', 'db', shows, () =>
        prismaTransactions(prismaLike as never, { db: value as never }),
      ),
      wrongType('createInbox', 'client.db', shows, () =>
        createInbox({ db: value, transaction: unreachable, bind: () => db } as never),
      ),
    ]),
    // Taken for a SqlExecutor by its inTransaction and execute(): the rest is checked too.
    ...(['createOutboxAdmin', 'InboxAdmin', 'createAuditLog'] as const).map((entry) =>
      wrongType(entry, entry === 'createAuditLog' ? 'executor' : 'client', 'missing transaction()', () => {
        const noTransaction = { ...db, transaction: undefined } as never;
        if (entry === 'createOutboxAdmin') return createOutboxAdmin(noTransaction);
        if (entry === 'InboxAdmin') return new InboxAdmin(noTransaction);
        return createAuditLog(noTransaction);
      }),
    ),
    // A single client where a Pool is needed (pgTransactionsClient.test.ts: a live one).
    wrongType('pgTransactions', 'pool', 'got a single client', () =>
      pgTransactions(listened(new Client({ connectionString: 'postgresql://127.0.0.1:1/none' })) as never),
    ),
    wrongType('serveMetrics', 'options', 'got undefined', () => serveMetrics(undefined as never)),
  ]);
});
