/**
 * SIGINT / SIGTERM during the mutating commands that are no bulk id list: `inbox replay` (one
 * change) and `migrate` (one transaction per migration, in a loop). As for the bulk commands
 * (interruptedBulk.test.ts), the first signal is noted, the change in flight finishes and is
 * answered, nothing new starts, and what was not attempted is named, exit 130 / 143 when something
 * was left; a second signal exits at once. On main a signal killed both at once: the operator
 * never heard whether the replay, or which migration, was applied. The real binary against a real
 * database; the change in flight is held by a lock another session keeps until the command said
 * it is stopping.
 */
import { randomUUID } from 'node:crypto';
import { Inbox } from '@ferry/core';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { migrationFolder } from '../../../test-support/migrationFolder';
import { runBinary } from './binary';
import { BOUND_MS, expectSecondSignalExits, holding, interruptInFlight } from './interrupting';

jest.setTimeout(90_000);

let t: TestDatabase;
let inbox: Inbox;

beforeAll(async () => {
  t = await createTestDatabase();
  inbox = new Inbox(t.prisma, {
    logger: pino({ level: 'silent' }),
    handlers: { work: async () => undefined },
    worker: { pollIntervalMs: 20 },
  });
});
afterAll(async () => {
  await inbox.close();
  await t.drop();
});

/** A COMPLETED receipt of `tenantId`: its id and version. */
async function completedReceipt(tenantId: string): Promise<{ id: string; version: number }> {
  const { record } = await inbox.accept({
    consumer: 'work',
    messageId: `m-${randomUUID()}`,
    tenantId,
    payload: {},
  });
  const row = async () =>
    (
      await t.db.query<{ status: string; row_version: number }>(
        'SELECT status, row_version FROM ferry_inbox_receipts WHERE id = $1::uuid',
        [record.id],
      )
    )[0];
  for (let i = 0; i < 50 && (await row())?.status !== 'COMPLETED'; i += 1) await inbox.runOnce();
  const done = await row();
  expect(done?.status).toBe('COMPLETED');
  return { id: record.id, version: done!.row_version };
}

function replay(tenant: string, { id, version }: { id: string; version: number }, requestId: string) {
  return runBinary([
    'inbox',
    'replay',
    id,
    '--expected-version',
    String(version),
    '--target-consumer',
    'rebuild',
    '--reason',
    'rebuild view',
    '--request-id',
    requestId,
    '--tenant',
    tenant,
    '--database-url',
    t.url,
  ]);
}

async function replays(requestId: string): Promise<number> {
  const [row] = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ferry_inbox_receipts WHERE replay_request_id = $1::uuid`,
    [requestId],
  );
  return row?.n ?? -1;
}

describe('inbox replay', () => {
  it('SIGINT: the replay in flight finishes and is answered; nothing was left, so the usual exit', async () => {
    const tenant = `t-${randomUUID()}`;
    const source = await completedReceipt(tenant);
    const requestId = randomUUID();
    // The replay's audit row waits for this lock, inside the replay's transaction.
    const lock = await holding(t, 'LOCK TABLE ferry_operator_audit IN SHARE MODE');
    const run = replay(tenant, source, requestId);
    let noted: boolean;
    try {
      noted = await interruptInFlight(t, run, 'SIGINT');
    } finally {
      await lock.release();
    }
    const ended = await run.ended(BOUND_MS);
    expect({ noted, ended }).toEqual({ noted: true, ended: { code: 0, signal: null, hung: false } });
    expect(run.stdout()).toEqual([
      expect.stringMatching(
        new RegExp(`^${source.id} accepted replayId=[0-9a-f-]{36} requestId=${requestId}$`),
      ),
    ]);
    expect(await replays(requestId)).toBe(1);
  });

  it('a second signal exits at once (143), the replay in flight still waiting', async () => {
    const tenant = `t-${randomUUID()}`;
    const source = await completedReceipt(tenant);
    const lock = await holding(t, 'LOCK TABLE ferry_operator_audit IN SHARE MODE');
    const run = replay(tenant, source, randomUUID());
    try {
      await expectSecondSignalExits(t, run, 'SIGTERM', 'inbox replay');
    } finally {
      await lock.release();
    }
  });
});

describe('migrate', () => {
  /** Three migrations; the second alters `held`, which the test locks. */
  async function folder(prefix: string): Promise<{ dir: string; held: string; third: string }> {
    const held = `${prefix}_held`;
    const third = `${prefix}_third`;
    await t.db.execute(`CREATE TABLE ${held} (n int)`);
    const dir = migrationFolder({
      '0001_first': `CREATE TABLE ${prefix}_first (n int);`,
      '0002_alter_held': `ALTER TABLE ${held} ADD COLUMN m int;`,
      '0003_third': `CREATE TABLE ${third} (n int);`,
    });
    return { dir, held, third };
  }

  async function exists(table: string): Promise<boolean> {
    const [row] = await t.db.query<{ found: boolean }>('SELECT to_regclass($1) IS NOT NULL AS found', [
      table,
    ]);
    return row?.found === true;
  }

  it('SIGTERM: the migration in flight commits, the next is not attempted and named, exit 143', async () => {
    const { dir, held, third } = await folder('mig_term');
    const lock = await holding(t, `LOCK TABLE ${held} IN ACCESS EXCLUSIVE MODE`);
    const args = ['migrate', '--migrations-dir', dir, '--table', 'mig_term_migrations'];
    const run = runBinary([...args, '--database-url', t.url]);
    let noted: boolean;
    try {
      noted = await interruptInFlight(t, run, 'SIGTERM');
    } finally {
      await lock.release();
    }
    const ended = await run.ended(BOUND_MS);
    expect({ noted, ended }).toEqual({ noted: true, ended: { code: 143, signal: null, hung: false } });
    expect(run.stdout()).toEqual([
      'applied 0001_first',
      'applied 0002_alter_held',
      'not_attempted 0003_third',
      'ferry migrate: 2 applied, 0 already applied, 1 not attempted; interrupted by SIGTERM: run it again for the rest',
    ]);
    expect(await exists(third)).toBe(false);
  });

  it('SIGINT under --json: the answer names what was not attempted and the signal, exit 130', async () => {
    const { dir, held } = await folder('mig_int');
    const lock = await holding(t, `LOCK TABLE ${held} IN ACCESS EXCLUSIVE MODE`);
    const args = ['migrate', '--migrations-dir', dir, '--table', 'mig_int_migrations', '--json'];
    const run = runBinary([...args, '--database-url', t.url]);
    let noted: boolean;
    try {
      noted = await interruptInFlight(t, run, 'SIGINT');
    } finally {
      await lock.release();
    }
    const ended = await run.ended(BOUND_MS);
    expect({ noted, ended }).toEqual({ noted: true, ended: { code: 130, signal: null, hung: false } });
    expect(JSON.parse(run.stdout()[0] ?? '{}')).toEqual({
      applied: ['0001_first', '0002_alter_held'],
      alreadyApplied: [],
      notAttempted: ['0003_third'],
      interrupted: { signal: 'SIGINT' },
    });
  });

  it('a second signal exits at once (130), the migration in flight still waiting', async () => {
    const { dir, held } = await folder('mig_again');
    const lock = await holding(t, `LOCK TABLE ${held} IN ACCESS EXCLUSIVE MODE`);
    const args = ['migrate', '--migrations-dir', dir, '--table', 'mig_again_migrations'];
    const run = runBinary([...args, '--database-url', t.url]);
    try {
      await expectSecondSignalExits(t, run, 'SIGINT', 'migrate');
    } finally {
      await lock.release();
    }
  });
});
