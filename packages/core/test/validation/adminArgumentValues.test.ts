import {
  createAuditLog,
  createOutboxAdmin,
  InboxAdmin,
  InboxPrivilegedAdmin,
  type InboxScopedAdmin,
  type OutboxAdmin,
} from '@ferry/core';
import { useAdminDatabase, type AdminFixture, type InboxRows } from '../../../../test-support/adminFixture';
import {
  describeArgumentTable,
  validationErrorOf,
  wrongArgument,
  type ArgumentRow,
} from '../../../../test-support/optionTables';

/**
 * Every admin method of OutboxAdmin (and its forTenant scope), InboxScopedAdmin (tenant, global,
 * privileged scopeOf), InboxPrivilegedAdmin and the audit log, called with an argument object that
 * is missing or not an object, or with one wrongly typed or out-of-range value: refused with
 * FERRY_VALIDATION_FAILED naming the argument and showing the value received, before anything
 * runs (no row changed, no audit row). Never a TypeError from inside, never a coerced value.
 */
const database = useAdminDatabase();
const db = () => database.t().db;
type Row = ArgumentRow<AdminFixture>;

/** Argument objects no method takes (`undefined` too where the argument has no default). */
const NOT_OBJECTS: Array<[unknown, string]> = [
  [null, 'null'],
  ['x', '"x" (string)'],
  [[], '[] (array)'],
  [42, '42 (number)'],
];
const MISSING: [unknown, string] = [undefined, 'undefined'];

function notObjects(
  method: string,
  field: string,
  call: (f: AdminFixture, value: never) => unknown,
  required = false,
): Row[] {
  return [...(required ? [MISSING] : []), ...NOT_OBJECTS].map(([value, shows]) =>
    wrongArgument(method, field, shows, (f) => call(f, value as never)),
  );
}

/** actor, reason and dryRun, wrongly typed, on a call taking AuditOptions. */
function auditRows(
  method: string,
  call: (f: AdminFixture, audit: Record<string, unknown>) => unknown,
): Row[] {
  return [
    wrongArgument(method, 'actor', '5 (number)', (f) => call(f, { actor: 5 })),
    wrongArgument(method, 'reason', '{} (object)', (f) => call(f, { reason: {} })),
    wrongArgument(method, 'dryRun', '"yes" (string)', (f) => call(f, { dryRun: 'yes' })),
  ];
}

/** limit as a string, 0, a fraction, NaN and above `max`. */
function limitRows(method: string, max: number, call: (f: AdminFixture, limit: unknown) => unknown): Row[] {
  return [
    wrongArgument(method, 'limit', '"5" (string)', (f) => call(f, '5')),
    wrongArgument(method, 'limit', '0 (number)', (f) => call(f, 0)),
    wrongArgument(method, 'limit', '1.5 (number)', (f) => call(f, 1.5)),
    wrongArgument(method, 'limit', 'NaN (number)', (f) => call(f, Number.NaN)),
    wrongArgument(method, 'limit', `${max + 1} (number)`, (f) => call(f, max + 1)),
  ];
}

/** `before` as text, an invalid Date, left out. */
function beforeRows(method: string, call: (f: AdminFixture, before: unknown) => unknown): Row[] {
  return [
    wrongArgument(method, 'before', '"yesterday" (string)', (f) => call(f, 'yesterday')),
    wrongArgument(method, 'before', 'Invalid Date', (f) => call(f, new Date('yesterday'))),
    wrongArgument(method, 'before', 'undefined', (f) => call(f, undefined)),
  ];
}

function outboxRows(name: string, admin: () => OutboxAdmin): Row[] {
  const m = (method: string) => `${name} ${method}`;
  const release = (f: AdminFixture, extra: Record<string, unknown>) =>
    admin().release({ claimToken: f.claimToken, ...extra } as never);
  const purge = (f: AdminFixture, extra: Record<string, unknown>) =>
    admin().purgeSent({ before: f.later, ...extra } as never);
  return [
    ...notObjects(m('retry'), 'retry', (f, v) => admin().retry(f.failed, v)),
    ...notObjects(m('retryMany'), 'retryMany', (f, v) => admin().retryMany([f.failed], v)),
    ...notObjects(m('markFailed'), 'markFailed', (f, v) => admin().markFailed(f.pending, 'poison', v)),
    ...notObjects(m('release'), 'release', (_f, v) => admin().release(v)),
    ...notObjects(m('list'), 'list', (_f, v) => admin().list(v)),
    ...notObjects(m('health'), 'health', (_f, v) => admin().health(v)),
    ...notObjects(m('purgeSent'), 'purgeSent', (_f, v) => admin().purgeSent(v), true),
    wrongArgument(m('retry'), 'id', '5 (number)', () => admin().retry(5 as never)),
    wrongArgument(m('retry'), 'id', '"not-a-uuid" (string)', () => admin().retry('not-a-uuid')),
    ...auditRows(m('retry'), (f, audit) => admin().retry(f.failed, audit as never)),
    ...notObjects(m('retryMany'), 'ids', (_f, v) => admin().retryMany(v), true),
    wrongArgument(m('retryMany'), 'ids', '[] (array)', () => admin().retryMany([])),
    wrongArgument(m('retryMany'), 'ids[1]', '5 (number)', (f) => admin().retryMany([f.failed, 5 as never])),
    wrongArgument(m('retryMany'), 'ids[0]', '"x" (string)', () => admin().retryMany(['x'])),
    ...auditRows(m('retryMany'), (f, audit) => admin().retryMany([f.failed], audit as never)),
    wrongArgument(m('markFailed'), 'id', '5 (number)', () => admin().markFailed(5 as never, 'poison')),
    wrongArgument(m('markFailed'), 'id', '"x" (string)', () => admin().markFailed('x', 'poison')),
    wrongArgument(m('markFailed'), 'reason', '42 (number)', (f) =>
      admin().markFailed(f.pending, 42 as never),
    ),
    wrongArgument(m('markFailed'), 'actor', '5 (number)', (f) =>
      admin().markFailed(f.pending, 'poison', { actor: 5 } as never),
    ),
    wrongArgument(m('markFailed'), 'dryRun', '"yes" (string)', (f) =>
      admin().markFailed(f.pending, 'poison', { dryRun: 'yes' } as never),
    ),
    ...limitRows(m('release'), 10_000, (_f, limit) => admin().release({ limit } as never)),
    wrongArgument(m('release'), 'claimToken', '5 (number)', () =>
      admin().release({ claimToken: 5 as never }),
    ),
    wrongArgument(m('release'), 'claimToken', '"abc" (string)', () => admin().release({ claimToken: 'abc' })),
    wrongArgument(m('release'), 'force', '"yes" (string)', (f) => release(f, { force: 'yes' })),
    ...auditRows(m('release'), release),
    ...beforeRows(m('purgeSent'), (f, before) => purge(f, { before })),
    ...limitRows(m('purgeSent'), 10_000, (f, limit) => purge(f, { limit })),
    ...auditRows(m('purgeSent'), purge),
    ...limitRows(m('list'), 1_000, (_f, limit) => admin().list({ limit } as never)),
    wrongArgument(m('list'), 'status', '"failed" (string)', () =>
      admin().list({ status: 'failed' as never }),
    ),
    wrongArgument(m('list'), 'type', '5 (number)', () => admin().list({ type: 5 as never })),
    wrongArgument(m('list'), 'key', '5 (number)', () => admin().list({ key: 5 as never })),
    wrongArgument(m('list'), 'cursor', '5 (number)', () => admin().list({ cursor: 5 as never })),
    wrongArgument(m('list'), 'createdBefore', '"yesterday" (string)', () =>
      admin().list({ createdBefore: 'yesterday' as never }),
    ),
    wrongArgument(m('health'), 'maxFailed', '"5" (string)', () =>
      admin().health({ maxFailed: '5' as never }),
    ),
    wrongArgument(m('health'), 'maxExpiredLeases', '1.5 (number)', () =>
      admin().health({ maxExpiredLeases: 1.5 }),
    ),
    wrongArgument(m('health'), 'maxOldestPendingAgeMs', '-1 (number)', () =>
      admin().health({ maxOldestPendingAgeMs: -1 }),
    ),
    wrongArgument(m('get'), 'id', '5 (number)', () => admin().get(5 as never)),
  ];
}

function inboxScopeRows(name: string, scoped: (f: AdminFixture) => [InboxScopedAdmin, InboxRows]): Row[] {
  const m = (method: string) => `${name} ${method}`;
  const admin = (f: AdminFixture) => scoped(f)[0];
  const requeue = (f: AdminFixture, extra: Record<string, unknown>) => {
    const [scope, rows] = scoped(f);
    return scope.requeue({ ...rows.dead, actor: 'ops', reason: 'fixed', ...extra } as never);
  };
  const replay = (f: AdminFixture, extra: Record<string, unknown>) => {
    const [scope, rows] = scoped(f);
    const input = { ...rows.completed, requestId: f.claimToken, targetConsumer: 'work', actor: 'ops' };
    return scope.replay({ ...input, reason: 'rebuild', ...extra } as never);
  };
  const release = (f: AdminFixture, extra: Record<string, unknown>) => {
    const [scope, rows] = scoped(f);
    return scope.release({ claimToken: rows.claimToken, ...extra } as never);
  };
  const purge = (f: AdminFixture, extra: Record<string, unknown>) =>
    admin(f).purgeCompletedPayload({ before: f.later, ...extra } as never);
  return [
    ...notObjects(m('requeue'), 'requeue', (f, v) => admin(f).requeue(v), true),
    ...notObjects(m('replay'), 'replay', (f, v) => admin(f).replay(v), true),
    ...notObjects(
      m('purgeCompletedPayload'),
      'purgeCompletedPayload',
      (f, v) => admin(f).purgeCompletedPayload(v),
      true,
    ),
    ...notObjects(m('release'), 'release', (f, v) => admin(f).release(v)),
    ...notObjects(m('list'), 'list', (f, v) => admin(f).list(v)),
    wrongArgument(m('requeue'), 'id', '5 (number)', (f) => requeue(f, { id: 5 })),
    wrongArgument(m('requeue'), 'id', '"abc" (string)', (f) => requeue(f, { id: 'abc' })),
    wrongArgument(m('requeue'), 'expectedVersion', '"1" (string)', (f) =>
      requeue(f, { expectedVersion: '1' }),
    ),
    wrongArgument(m('requeue'), 'expectedVersion', '0 (number)', (f) => requeue(f, { expectedVersion: 0 })),
    wrongArgument(m('requeue'), 'expectedVersion', '1.5 (number)', (f) =>
      requeue(f, { expectedVersion: 1.5 }),
    ),
    // row_version is an int: past it PostgreSQL would refuse the statement, after the audit began.
    wrongArgument(m('requeue'), 'expectedVersion', '2147483648 (number)', (f) =>
      requeue(f, { expectedVersion: 2_147_483_648 }),
    ),
    wrongArgument(m('replay'), 'expectedVersion', '2147483648 (number)', (f) =>
      replay(f, { expectedVersion: 2_147_483_648 }),
    ),
    ...auditRows(m('requeue'), requeue),
    wrongArgument(m('replay'), 'requestId', '5 (number)', (f) => replay(f, { requestId: 5 })),
    wrongArgument(m('replay'), 'targetConsumer', '5 (number)', (f) => replay(f, { targetConsumer: 5 })),
    wrongArgument(m('replay'), 'expectedVersion', 'NaN (number)', (f) =>
      replay(f, { expectedVersion: Number.NaN }),
    ),
    ...auditRows(m('replay'), replay),
    ...limitRows(m('release'), 10_000, (f, limit) => admin(f).release({ limit } as never)),
    wrongArgument(m('release'), 'claimToken', '5 (number)', (f) =>
      admin(f).release({ claimToken: 5 as never }),
    ),
    wrongArgument(m('release'), 'force', '"yes" (string)', (f) => release(f, { force: 'yes' })),
    ...auditRows(m('release'), release),
    ...beforeRows(m('purgeCompletedPayload'), (f, before) => purge(f, { before })),
    ...limitRows(m('purgeCompletedPayload'), 10_000, (f, limit) => purge(f, { limit })),
    ...auditRows(m('purgeCompletedPayload'), purge),
    ...limitRows(m('list'), 500, (f, limit) => admin(f).list({ limit } as never)),
    wrongArgument(m('list'), 'status', '"dead" (string)', (f) => admin(f).list({ status: 'dead' as never })),
    wrongArgument(m('list'), 'cursor', '5 (number)', (f) => admin(f).list({ cursor: 5 as never })),
    wrongArgument(m('get'), 'id', '5 (number)', (f) => admin(f).get(5 as never)),
  ];
}

const privileged = () => new InboxPrivilegedAdmin(db(), { privilegedAdmin: true });
const inboxScopes: Array<[string, (f: AdminFixture) => [InboxScopedAdmin, InboxRows]]> = [
  ['inbox forTenant', (f) => [new InboxAdmin(db()).forTenant('acme'), f.tenant]],
  ['inbox forGlobal', (f) => [new InboxAdmin(db()).forGlobal(), f.global]],
  ['inbox privileged scopeOf', (f) => [privileged().scopeOf({ tenantId: 'acme' }), f.tenant]],
];

function privilegedRows(): Row[] {
  const m = (method: string) => `inbox privileged ${method}`;
  return [
    ...notObjects(m('list'), 'list', (_f, v) => privileged().list(v)),
    ...limitRows(m('list'), 500, (_f, limit) => privileged().list({ limit } as never)),
    wrongArgument(m('list'), 'cursor', '5 (number)', () => privileged().list({ cursor: 5 as never })),
    wrongArgument(m('get'), 'id', '5 (number)', () => privileged().get(5 as never)),
    ...notObjects(m('scopeOf'), 'scopeOf', (_f, v) => privileged().scopeOf(v), true),
    wrongArgument(m('scopeOf'), 'tenantId', '5 (number)', () =>
      privileged().scopeOf({ tenantId: 5 as never }),
    ),
    wrongArgument(m('scopeOf'), 'tenantId', '"" (string)', () => privileged().scopeOf({ tenantId: '' })),
  ];
}

function auditLogRows(): Row[] {
  const list = (query: Record<string, unknown>) => createAuditLog(db()).list(query as never);
  return [
    ...notObjects('audit list', 'list', (_f, v) => createAuditLog(db()).list(v)),
    ...limitRows('audit list', 1_000, (_f, limit) => list({ limit })),
    ...['tenantId', 'scope', 'action', 'actor', 'id', 'cursor'].map((field) =>
      wrongArgument('audit list', field, '5 (number)', () => list({ [field]: 5 })),
    ),
    wrongArgument('audit list', 'since', 'Invalid Date', () => list({ since: new Date('x') })),
  ];
}

// The database client the admins and the audit log are built on is a required option, refused
// with FerryConfigError at construction: unknownOptionKeys.test.ts (required options) has those rows.

describe('an admin argument that is missing, not an object, or of the wrong type or range is refused before anything runs', () => {
  describeArgumentTable<AdminFixture>(
    [
      ...outboxRows('outbox', () => createOutboxAdmin(db())),
      ...outboxRows('outbox forTenant', () => createOutboxAdmin(db()).forTenant('acme')),
      wrongArgument('outbox forTenant', 'tenantId', '5 (number)', () =>
        createOutboxAdmin(db()).forTenant(5 as never),
      ),
      wrongArgument('inbox forTenant', 'tenantId', '5 (number)', () =>
        new InboxAdmin(db()).forTenant(5 as never),
      ),
      ...inboxScopes.flatMap(([name, scoped]) => inboxScopeRows(name, scoped)),
      ...privilegedRows(),
      ...auditLogRows(),
    ],
    database.fixture,
    database.state,
  );
});

describe('an optional argument object left out takes its documented defaults', () => {
  const calls: Array<[string, () => Promise<unknown>]> = [
    ['outbox list()', () => createOutboxAdmin(db()).list(undefined)],
    ['outbox health()', () => createOutboxAdmin(db()).health(undefined)],
    [
      'outbox retry(id)',
      async () => createOutboxAdmin(db()).retry((await database.fixture()).failed, undefined),
    ],
    ['inbox list()', () => new InboxAdmin(db()).forTenant('acme').list(undefined)],
    ['inbox privileged list()', () => privileged().list(undefined)],
    ['audit list()', () => createAuditLog(db()).list(undefined)],
  ];
  it.each(calls)('%s answers', async (_name, call) => {
    await expect(call()).resolves.toBeDefined();
  });
});

describe('a refused argument value is shown with its secrets masked, as option errors are', () => {
  it.each<[string, () => unknown]>([
    [
      'an actor object with a password',
      () => createOutboxAdmin(db()).release({ actor: { password: 'hunter2' } as never }),
    ],
    [
      'a connection string as the limit',
      () => createOutboxAdmin(db()).list({ limit: 'postgres://ops:hunter2@db/x' as never }),
    ],
    ['a password pair as the limit', () => privileged().list({ limit: 'password=hunter2' as never })],
  ])('%s', async (_name, call) => {
    const error = await validationErrorOf(call);
    expect(error.code).toBe('FERRY_VALIDATION_FAILED');
    expect(error.message).toMatch(/, got .*(redacted|\*\*\*|ops@|postgres:\/\/)/);
    expect(error.message).not.toContain('hunter2');
  });
});
