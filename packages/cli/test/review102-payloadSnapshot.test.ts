/**
 * Review 102 (failed first): `show` and `list --json` read a record through core's admin API, then
 * its payload and headers as PostgreSQL stores them (exactJson.ts) in a second statement. A change
 * committed between the two made one answer of two moments: a receipt whose payload was purged
 * in between printed `payload: null` beside `payloadPurgedAt: null` and the version before the
 * purge; an event deleted in between (purge-sent) lost its exact payload (`1e400` printed `null`).
 *
 * Expected: every answer is one snapshot: the record as it was when it was read, payload included.
 * The change is made by another session exactly between the two statements: the test holds the
 * CLI's statement that reads the payload text until the change committed.
 */
import { randomUUID } from 'node:crypto';
import { InboxAdmin, createOutboxAdmin } from '@ferry/core';
import { Client } from 'pg';
import { useCliDatabase } from './cliDatabase';

const d = useCliDatabase();

/** The CLI's statement reading the stored JSON texts (exactJson.ts). */
const TEXT_READ = 'SELECT id::text AS id, payload::text AS payload';

/** Runs `change` (another session's, committed) just before the CLI's next TEXT_READ statement. */
function beforeTextRead(change: () => Promise<unknown>): { done: () => boolean } {
  let pending: (() => Promise<unknown>) | undefined = change;
  const query = Client.prototype.query;
  const spy = jest.spyOn(Client.prototype, 'query');
  spy.mockImplementation(function (this: Client, ...args: unknown[]) {
    const first = args[0] as string | { text?: string } | undefined;
    const text = typeof first === 'string' ? first : first?.text;
    const run = pending;
    if (run === undefined || text?.includes(TEXT_READ) !== true) {
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    }
    pending = undefined;
    return run().then(() => (query as (...a: unknown[]) => unknown).apply(this, args));
  } as typeof query);
  return { done: () => pending === undefined };
}

afterEach(() => {
  jest.restoreAllMocks();
});

async function completedReceipt(tenant: string): Promise<string> {
  const [row] = await d.test.db.query<{ id: string }>(
    `INSERT INTO ferry_inbox_receipts (tenant_id, consumer, message_id, payload, payload_fingerprint,
       payload_bytes, headers, status, attempts, max_attempts, row_version, completed_at)
     VALUES ($1, 'work', $2, '{"n": 1}', 'fp', 8, '{}', 'COMPLETED', 1, 5, 3, now() - interval '1 day')
     RETURNING id::text AS id`,
    [tenant, `m-${randomUUID()}`],
  );
  return row!.id;
}

function purgeOf(tenant: string): () => Promise<unknown> {
  const admin = new InboxAdmin(d.test.db).forTenant(tenant);
  return () => admin.purgeCompletedPayload({ before: new Date(), actor: 'test' });
}

interface Receipt {
  payload: unknown;
  payloadPurgedAt: string | null;
  rowVersion: number;
}

/** One moment's receipt: a payload and no purge time, or no payload and a purge time. */
function expectOneMoment(receipt: Receipt): void {
  expect({ purged: receipt.payload === null, at: receipt.payloadPurgedAt !== null }).toEqual(
    receipt.payload === null ? { purged: true, at: true } : { purged: false, at: false },
  );
  if (receipt.payload !== null) {
    expect(receipt.payload).toEqual({ n: 1 });
    expect(receipt.rowVersion).toBe(3);
  }
}

it('inbox show --json: a purge between the reads answers the receipt as of one moment', async () => {
  const tenant = `t-${randomUUID()}`;
  const id = await completedReceipt(tenant);
  const hook = beforeTextRead(purgeOf(tenant));
  const run = await d.cli('inbox', 'show', id, '--tenant', tenant, '--json');
  expect(hook.done()).toBe(true);
  expect(run.code).toBe(0);
  expectOneMoment((JSON.parse(run.lines[0]!) as { item: Receipt }).item);
});

it('inbox show (text): the same', async () => {
  const tenant = `t-${randomUUID()}`;
  const id = await completedReceipt(tenant);
  const hook = beforeTextRead(purgeOf(tenant));
  const run = await d.cli('inbox', 'show', id, '--tenant', tenant);
  expect(hook.done()).toBe(true);
  expect(run.code).toBe(0);
  const field = (name: string): unknown => {
    const line = run.lines.find((l) => l.startsWith(`${name}: `));
    return JSON.parse(line!.slice(name.length + 2)) as unknown;
  };
  expectOneMoment({
    payload: field('payload'),
    payloadPurgedAt: run.lines.includes('payloadPurgedAt: null') ? null : 'purged',
    rowVersion: Number(field('rowVersion')),
  });
});

it('inbox list --json: the same for every item', async () => {
  const tenant = `t-${randomUUID()}`;
  await completedReceipt(tenant);
  await completedReceipt(tenant);
  const hook = beforeTextRead(purgeOf(tenant));
  const run = await d.cli('inbox', 'list', '--tenant', tenant, '--json');
  expect(hook.done()).toBe(true);
  expect(run.code).toBe(0);
  const { items } = JSON.parse(run.lines[0]!) as { items: Receipt[] };
  expect(items).toHaveLength(2);
  for (const item of items) expectOneMoment(item);
});

it('outbox show and list --json: an event deleted between the reads keeps its exact payload (PostgreSQL writes 1e400 in full)', async () => {
  const tenant = `t-${randomUUID()}`;
  const insert = async (): Promise<string> => {
    const [row] = await d.test.db.query<{ id: string }>(
      `INSERT INTO outbox_events (id, event_type, payload, tenant_id, max_retries, status, published_at)
       VALUES (gen_random_uuid(), 'order.paid', '{"n": 1e400}', $1, 5, 'SENT', now() - interval '1 day')
       RETURNING id::text AS id`,
      [tenant],
    );
    return row!.id;
  };
  const purge = (): Promise<unknown> =>
    createOutboxAdmin(d.test.db).forTenant(tenant).purgeSent({ before: new Date(), actor: 'test' });
  const id = await insert();
  const shown = beforeTextRead(purge);
  const show = await d.cli('outbox', 'show', id, '--tenant', tenant, '--json');
  expect(shown.done()).toBe(true);
  expect(show.code).toBe(0);
  expect(show.lines[0]).toContain(`"payload":{"n": 1${'0'.repeat(400)}}`);
  jest.restoreAllMocks();

  await insert();
  const listed = beforeTextRead(purge);
  const list = await d.cli('outbox', 'list', '--tenant', tenant, '--json');
  expect(listed.done()).toBe(true);
  expect(list.code).toBe(0);
  expect(list.lines[0]).toContain(`"payload":{"n": 1${'0'.repeat(400)}}`);
});
