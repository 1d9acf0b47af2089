/**
 * Ctrl-C (SIGINT) or SIGTERM during a bulk mutation: the first signal stops the command from
 * starting another id, the change in flight finishes, and the answer names what was applied and
 * what was not attempted, exit 130 (SIGINT) or 143 (SIGTERM); a second signal exits at once. The
 * real binary against a real database; the change in flight is held by a row lock another
 * session keeps until the command said it is stopping.
 */
import { randomUUID } from 'node:crypto';
import { createRelay, emitMany, Inbox, InboxPermanentError } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { runBinary } from './binary';
import { BOUND_MS, expectSecondSignalExits, holding, interruptInFlight } from './interrupting';

jest.setTimeout(90_000);

let t: TestDatabase;
let inbox: Inbox;

async function statusOf(table: 'ferry_inbox_receipts' | 'outbox_events', id: string): Promise<string> {
  const [row] = await t.db.query<{ status: string }>(`SELECT status FROM ${table} WHERE id = $1::uuid`, [id]);
  return row?.status ?? 'missing';
}

async function deadReceipt(tenantId: string): Promise<string> {
  const { record } = await inbox.accept({
    consumer: 'work',
    messageId: `m-${randomUUID()}`,
    tenantId,
    payload: {},
  });
  for (let i = 0; i < 50 && (await statusOf('ferry_inbox_receipts', record.id)) !== 'DEAD'; i += 1) {
    await inbox.runOnce();
  }
  expect(await statusOf('ferry_inbox_receipts', record.id)).toBe('DEAD');
  const [row] = await t.db.query<{ row_version: number }>(
    'SELECT row_version FROM ferry_inbox_receipts WHERE id = $1::uuid',
    [record.id],
  );
  return `${record.id}:${row!.row_version}`;
}

async function failedEvents(tenantId: string, n: number): Promise<string[]> {
  const events = Array.from({ length: n }, () => ({ type: 'order.placed', payload: {}, tenantId }));
  const { ids } = await emitMany(t.db, events);
  const publisher = new InMemoryPublisher({ decide: () => ({ permanent: 'broker said no' }) });
  const relay = createRelay({ db: t.db, publisher, logger: pino({ level: 'silent' }) });
  await relay.runOnce();
  await relay.close();
  for (const id of ids) expect(await statusOf('outbox_events', id)).toBe('FAILED');
  return ids;
}

/** Another session holding `id`'s row lock until release(). */
function lockRow(table: 'ferry_inbox_receipts' | 'outbox_events', id: string) {
  return holding(t, `SELECT 1 FROM ${table} WHERE id = $1::uuid FOR UPDATE`, [id]);
}

beforeAll(async () => {
  t = await createTestDatabase();
  inbox = new Inbox(t.prisma, {
    logger: pino({ level: 'silent' }),
    handlers: {
      work: async () => {
        throw new InboxPermanentError('handler is broken');
      },
    },
    worker: { pollIntervalMs: 20, retryBaseMs: 1, retryMaxMs: 1 },
  });
});
afterAll(async () => {
  await inbox.close();
  await t.drop();
});

async function sentEvents(tenantId: string, n: number): Promise<string[]> {
  const events = Array.from({ length: n }, () => ({ type: 'order.placed', payload: {}, tenantId }));
  const { ids } = await emitMany(t.db, events);
  const relay = createRelay({
    db: t.db,
    publisher: new InMemoryPublisher(),
    logger: pino({ level: 'silent' }),
  });
  await relay.runOnce();
  await relay.close();
  for (const id of ids) expect(await statusOf('outbox_events', id)).toBe('SENT');
  return ids;
}

describe('the first signal during a bulk mutation', () => {
  it('inbox requeue of ids, SIGINT: the one in flight finishes, the rest is named not_attempted, exit 130', async () => {
    const tenant = `t-${randomUUID()}`;
    const targets = [await deadReceipt(tenant), await deadReceipt(tenant), await deadReceipt(tenant)];
    const [first, second, third] = targets.map((target) => target.split(':')[0]!) as [string, string, string];
    const lock = await lockRow('ferry_inbox_receipts', second);
    const run = runBinary([
      'inbox',
      'requeue',
      ...targets,
      '--tenant',
      tenant,
      '--reason',
      'fixed',
      '--database-url',
      t.url,
    ]);
    let noted: boolean;
    try {
      noted = await interruptInFlight(t, run, 'SIGINT');
    } finally {
      await lock.release();
    }
    const ended = await run.ended(BOUND_MS);
    expect({ noted, ended }).toEqual({ noted: true, ended: { code: 130, signal: null, hung: false } });
    expect(run.stdout()).toEqual([`${first} applied`, `${second} applied`, `${third} not_attempted`]);
    expect(run.stderr().at(-1)).toBe(
      'ferry inbox requeue: 2 applied, 1 not_attempted; interrupted by SIGINT: not attempted: the 1 id marked not_attempted',
    );
    expect(await statusOf('ferry_inbox_receipts', third)).toBe('DEAD');
    expect(await statusOf('ferry_inbox_receipts', second)).not.toBe('DEAD');
  });

  it('outbox retry --all, SIGTERM: the batch in flight commits, the events not yet listed are left, exit 143', async () => {
    const tenant = `t-${randomUUID()}`;
    const ids = await failedEvents(tenant, 3);
    // The first event the command lists (newest first), so that more are left after it.
    const [head] = await t.db.query<{ id: string }>(
      `SELECT id::text FROM outbox_events WHERE tenant_id = $1 ORDER BY created_at DESC, seq DESC LIMIT 1`,
      [tenant],
    );
    const lock = await lockRow('outbox_events', head!.id);
    const argv = ['outbox', 'retry', '--all', '--tenant', tenant, '--batch-size', '1', '--json'];
    const run = runBinary([...argv, '--database-url', t.url]);
    let noted: boolean;
    try {
      noted = await interruptInFlight(t, run, 'SIGTERM');
    } finally {
      await lock.release();
    }
    const ended = await run.ended(BOUND_MS);
    expect({ noted, ended }).toEqual({ noted: true, ended: { code: 143, signal: null, hung: false } });
    const answer = JSON.parse(run.stdout()[0] ?? '{}') as {
      results?: Array<{ id: string; outcome: string }>;
      interrupted?: unknown;
    };
    expect(answer.results).toEqual([expect.objectContaining({ id: head!.id, outcome: 'applied' })]);
    expect(answer.interrupted).toEqual({ signal: 'SIGTERM', more: true });
    const statuses = await Promise.all(ids.map((id) => statusOf('outbox_events', id)));
    expect(statuses.filter((s) => s === 'FAILED')).toHaveLength(2);
  });

  it('outbox purge-sent, SIGINT: the pass in flight commits, no other pass starts, exit 130', async () => {
    const tenant = `t-${randomUUID()}`;
    const ids = await sentEvents(tenant, 3);
    // Every audited change inserts its audit row in its transaction: the first pass waits here.
    const lock = await holding(t, 'LOCK TABLE ferry_operator_audit IN SHARE MODE');
    // Every event sent so far (a --before in the future is refused: review 123).
    const before = '0s';
    const argv = [
      'outbox',
      'purge-sent',
      '--before',
      before,
      '--tenant',
      tenant,
      '--batch-size',
      '1',
      '--json',
    ];
    const run = runBinary([...argv, '--database-url', t.url]);
    let noted: boolean;
    try {
      noted = await interruptInFlight(t, run, 'SIGINT');
    } finally {
      await lock.release();
    }
    const ended = await run.ended(BOUND_MS);
    expect({ noted, ended }).toEqual({ noted: true, ended: { code: 130, signal: null, hung: false } });
    const answer = JSON.parse(run.stdout()[0] ?? '{}') as { counts?: unknown; interrupted?: unknown };
    expect(answer).toMatchObject({ counts: { deleted: 1 }, interrupted: { signal: 'SIGINT', more: true } });
    const statuses = await Promise.all(ids.map((id) => statusOf('outbox_events', id)));
    expect(statuses.filter((s) => s === 'SENT')).toHaveLength(2);
  });

  it('a second signal exits at once (130), the change in flight still waiting', async () => {
    const tenant = `t-${randomUUID()}`;
    const targets = [await deadReceipt(tenant), await deadReceipt(tenant)];
    const lock = await lockRow('ferry_inbox_receipts', targets[0]!.split(':')[0]!);
    const run = runBinary([
      'inbox',
      'requeue',
      ...targets,
      '--tenant',
      tenant,
      '--reason',
      'fixed',
      '--database-url',
      t.url,
    ]);
    try {
      await expectSecondSignalExits(t, run, 'SIGINT', 'inbox requeue');
    } finally {
      await lock.release();
    }
  });
});
