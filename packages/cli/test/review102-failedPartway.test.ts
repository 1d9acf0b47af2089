/**
 * Review 102 (failed first): a bulk command by ids that fails part-way (a statement timeout at
 * its second id) answered what it applied before the failure, but not the ids it never tried:
 * the operator could not tell, from the answer, which of the ids given were left unapplied
 * (after Ctrl-C they are listed as `not_attempted`; after a failure they were missing).
 *
 * Expected: every id given is answered: applied ones as such, the id in flight when the failure
 * came `not_applied` (its transaction rolled back; `detail` the error's code), the ids after it
 * `not_attempted`, in text and under --json.
 *
 * The statement timeout is 2 s: it bounds the connection for a transaction too, and a loaded
 * machine took more than 500 ms for one (FERRY_DATABASE_UNAVAILABLE where FERRY_TIMEOUT was meant).
 */
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { useCliDatabase } from './cliDatabase';

const d = useCliDatabase();

async function deadReceipts(tenant: string, n: number): Promise<string[]> {
  const rows = await d.test.db.query<{ id: string }>(
    `INSERT INTO ferry_inbox_receipts (tenant_id, consumer, message_id, payload, payload_fingerprint,
       payload_bytes, headers, status, attempts, max_attempts, row_version, dead_at, last_error)
     SELECT $1, 'work', gen_random_uuid()::text, '{}', 'fp', 2, '{}', 'DEAD', 5, 5, 6, now(), 'broken'
     FROM generate_series(1, $2::int)
     RETURNING id::text AS id`,
    [tenant, n],
  );
  return rows.map((row) => row.id);
}

async function failedEvents(tenant: string, n: number): Promise<string[]> {
  const rows = await d.test.db.query<{ id: string }>(
    `INSERT INTO outbox_events (id, event_type, payload, tenant_id, max_retries, status, failed_at, last_error)
     SELECT gen_random_uuid(), 'order.paid', '{}', $1, 5, 'FAILED', now(), 'broker refused'
     FROM generate_series(1, $2::int)
     RETURNING id::text AS id`,
    [tenant, n],
  );
  return rows.map((row) => row.id);
}

/** Runs `work` while another session holds the row lock of `id` in `table`. */
async function whileLocked<T>(table: string, id: string, work: () => Promise<T>): Promise<T> {
  const client = listened(new Client({ connectionString: d.test.url }));
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query(`SELECT 1 FROM ${table} WHERE id = $1::uuid FOR UPDATE`, [id]);
    return await work();
  } finally {
    await client.query('ROLLBACK');
    await client.end();
  }
}

/** `outbox retry` of `n` FAILED events, two a batch, while another session holds the `held`th one. */
async function retryHeld(n: number, held: number) {
  const tenant = `t-${randomUUID()}`;
  const ids = await failedEvents(tenant, n);
  const run = await whileLocked('outbox_events', ids[held]!, () =>
    d.cli('outbox', 'retry', ...ids, '--batch-size', '2', '--tenant', tenant, '--statement-timeout', '2s'),
  );
  return { ids, run };
}

interface Answer {
  results: Array<{ id: string; outcome: string; detail?: string }>;
  counts: Record<string, number>;
  error: { code: string };
}

it('inbox requeue: applied, then the id in flight not_applied, then the ids never tried not_attempted', async () => {
  const tenant = `t-${randomUUID()}`;
  const [a, b, c] = await deadReceipts(tenant, 3);
  const ids = [a, b, c].map((id) => `${id}:6`);
  const run = await whileLocked('ferry_inbox_receipts', b!, () =>
    d.cli(
      'inbox',
      'requeue',
      ...ids,
      '--reason',
      'fixed',
      '--tenant',
      tenant,
      '--statement-timeout',
      '2s',
      '--json',
    ),
  );
  expect(run.code).toBe(1);
  const answer = JSON.parse(run.lines[0]!) as Answer;
  expect(answer.error.code).toBe('FERRY_TIMEOUT');
  expect(answer.results).toEqual([
    expect.objectContaining({ id: a, outcome: 'applied' }),
    { id: b, outcome: 'not_applied', detail: 'FERRY_TIMEOUT' },
    { id: c, outcome: 'not_attempted' },
  ]);
  expect(answer.counts).toEqual({ applied: 1, not_applied: 1, not_attempted: 1 });
});

it('outbox retry failing at its first batch answers the error alone: nothing was applied (a guard)', async () => {
  const { ids, run } = await retryHeld(4, 1);
  expect(run.code).toBe(1);
  expect(run.lines).toEqual([]);
  expect(run.errors[0]).toMatch(/^ferry outbox retry: FERRY_TIMEOUT: /);
  // The first batch (a, b) is one transaction: b's lock holds it, and it rolls back whole.
  const [first] = await d.test.db.query<{ status: string }>(
    'SELECT status FROM outbox_events WHERE id = $1::uuid',
    [ids[0]],
  );
  expect(first?.status).toBe('FAILED');
});

it('outbox retry: a later batch failing names the ids of its batch not_applied and the rest not_attempted', async () => {
  const { ids, run } = await retryHeld(5, 2);
  const [a, b, c, e, f] = ids;
  expect(run.code).toBe(1);
  expect(run.lines).toEqual([
    `${a} applied`,
    `${b} applied`,
    `${c} not_applied: FERRY_TIMEOUT`,
    `${e} not_applied: FERRY_TIMEOUT`,
    `${f} not_attempted`,
  ]);
  expect(run.errors[0]).toBe(
    'ferry outbox retry: 2 applied, 2 not_applied, 1 not_attempted before the failure',
  );
});
