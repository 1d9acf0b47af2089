import { randomUUID } from 'node:crypto';
import { Inbox, InboxPermanentError } from '@ferry/core';
import { Client } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import pino from 'pino';
import { runCli } from '@ferry/cli';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { captureIo } from './io';

/**
 * Review finding (failed first): a command that fails part-way must still say what it did before
 * the failure: the ids a bulk command already committed, the request id a replay generated (so
 * it can be retried idempotently).
 */
describe('ferry answers a failure part-way with what was done', () => {
  let t: TestDatabase;
  let inbox: Inbox;
  let fail = true;

  async function cli(...argv: string[]) {
    const io = captureIo();
    const code = await runCli([...argv, '--database-url', t.url], io, { FERRY_ACTOR: 'ops@test' });
    return { code, ...io };
  }

  async function rowOf(id: string): Promise<{ status: string; row_version: number } | undefined> {
    const [row] = await t.db.query<{ status: string; row_version: number }>(
      'SELECT status, row_version FROM ferry_inbox_receipts WHERE id = $1::uuid',
      [id],
    );
    return row;
  }

  async function receiptIn(status: 'DEAD' | 'COMPLETED', tenantId: string): Promise<string> {
    const { record } = await inbox.accept({
      consumer: 'work',
      messageId: `m-${randomUUID()}`,
      tenantId,
      payload: { n: 1 },
    });
    fail = status === 'DEAD';
    for (let i = 0; i < 50 && (await rowOf(record.id))?.status !== status; i += 1) await inbox.runOnce();
    fail = true;
    expect((await rowOf(record.id))?.status).toBe(status);
    return record.id;
  }

  /** Runs `work` while a second session holds `sql`'s locks. */
  async function whileHeld<T>(sql: string, values: unknown[], work: () => Promise<T>): Promise<T> {
    const client = listened(new Client({ connectionString: t.url }));
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query(sql, values);
      return await work();
    } finally {
      await client.query('ROLLBACK');
      await client.end();
    }
  }

  /** `inbox requeue` of two DEAD receipts while another session holds the second one. */
  async function requeueSecondHeld(...options: string[]) {
    const tenant = `t-${randomUUID()}`;
    const first = await receiptIn('DEAD', tenant);
    const second = await receiptIn('DEAD', tenant);
    const [v1, v2] = [(await rowOf(first))!.row_version, (await rowOf(second))!.row_version];
    const ids = [`${first}:${v1}`, `${second}:${v2}`];
    const answer = await whileHeld(
      'SELECT 1 FROM ferry_inbox_receipts WHERE id = $1::uuid FOR UPDATE',
      [second],
      () => cli('inbox', 'requeue', ...ids, '--reason', 'fixed', '--tenant', tenant, ...options),
    );
    return { first, second, answer };
  }

  beforeAll(async () => {
    t = await createTestDatabase();
    inbox = new Inbox(t.prisma, {
      logger: pino({ level: 'silent' }),
      handlers: {
        work: async () => {
          if (fail) throw new InboxPermanentError('handler is broken');
        },
        rebuild: async () => undefined,
      },
      worker: { pollIntervalMs: 20, leaseMs: 2_000, heartbeatIntervalMs: 200, retryBaseMs: 1, retryMaxMs: 1 },
    });
  });
  afterAll(async () => {
    await inbox.close();
    await t.drop();
  });

  it('a requeue that fails at its second batch still reports the first batch it applied (committed)', async () => {
    // The second batch misses the statement deadline.
    const { first, second, answer } = await requeueSecondHeld(
      '--batch-size',
      '1',
      '--statement-timeout',
      '500ms',
      '--json',
    );
    // The first batch committed: the receipt is PENDING (or already claimed) again.
    expect((await rowOf(first))?.status).not.toBe('DEAD');
    expect(answer.code).toBe(1);
    // The operator must learn from the answer which ids were changed before the failure; on main
    // the answer is the error alone, and `first` appears nowhere in it.
    const document = JSON.parse(answer.lines[0]!) as { results: unknown[]; error: { code: string } };
    // The id whose transaction failed is answered too (review 102): not applied, or unknown.
    expect(document.results).toEqual([
      expect.objectContaining({ id: first, outcome: 'applied' }),
      {
        id: second,
        outcome: expect.stringMatching(/^(not_applied|outcome_unknown)$/),
        detail: document.error.code,
      },
    ]);
    expect(document.error.code).toMatch(/FERRY_TIMEOUT|FERRY_OUTCOME_UNKNOWN/);
  });

  it('in text mode too: the ids applied before the failure (within one batch) on stdout, the summary says so', async () => {
    const { first, second, answer } = await requeueSecondHeld('--statement-timeout', '500ms');
    // One batch of two ids, each its own transaction: the first committed before the second failed.
    expect(answer.code).toBe(1);
    expect(answer.lines).toEqual([
      `${first} applied`,
      expect.stringMatching(new RegExp(`^${second} (not_applied|outcome_unknown): FERRY_`)),
    ]);
    expect(answer.errors[0]).toMatch(
      /^ferry inbox requeue: 1 applied, 1 (not_applied|outcome_unknown) before the failure$/,
    );
    expect(answer.errors[1]).toMatch(/^ferry inbox requeue: FERRY_(TIMEOUT|OUTCOME_UNKNOWN): /);
  });

  it('a purge that fails at a later pass still counts the rows its earlier passes deleted', async () => {
    // A trigger refuses to delete one row: the pass that reaches it fails, the one before committed.
    await t.db.execute(`
      CREATE FUNCTION refuse_purge() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF OLD.event_type = 'purge.refused' THEN RAISE EXCEPTION 'refused by the test'; END IF;
        RETURN OLD;
      END $$`);
    await t.db.execute(
      'CREATE TRIGGER refuse_purge BEFORE DELETE ON outbox_events FOR EACH ROW EXECUTE FUNCTION refuse_purge()',
    );
    await t.db.execute(
      `INSERT INTO outbox_events (id, event_type, payload, max_retries, status, published_at, created_at)
       VALUES (gen_random_uuid(), 'purge.ok', '{}', 5, 'SENT', now() - interval '3 days', now() - interval '4 days'),
              (gen_random_uuid(), 'purge.refused', '{}', 5, 'SENT', now() - interval '2 days', now() - interval '4 days')`,
    );
    try {
      const answer = await cli('outbox', 'purge-sent', '--before', '1d', '--batch-size', '1', '--json');
      expect(answer.code).toBe(1);
      const document = JSON.parse(answer.lines[0]!) as { counts: Record<string, number>; error: object };
      expect(document).toMatchObject({ action: 'outbox purge-sent', counts: { deleted: 1 } });
      expect(document.error).toMatchObject({ code: expect.stringMatching(/^FERRY_/) });
      const text = await cli('outbox', 'purge-sent', '--before', '1d', '--batch-size', '1');
      // Nothing left to delete before the refused row: nothing applied, the error alone.
      expect(text.code).toBe(1);
      expect(text.errors[0]).toMatch(/^ferry outbox purge-sent: FERRY_/);
    } finally {
      await t.db.execute('DROP TRIGGER refuse_purge ON outbox_events');
    }
  });

  it('a replay that times out without --request-id names the request id it used, so it can be retried idempotently', async () => {
    const tenant = `t-${randomUUID()}`;
    const source = await receiptIn('COMPLETED', tenant);
    const version = (await rowOf(source))!.row_version;
    const replay = (...options: string[]) =>
      cli(
        'inbox',
        'replay',
        source,
        '--expected-version',
        String(version),
        '--target-consumer',
        'rebuild',
        '--reason',
        'rebuild',
        '--tenant',
        tenant,
        '--json',
        ...options,
      );
    // The audit trail is locked by another session: the replay's transaction misses its deadline.
    const answer = await whileHeld('LOCK TABLE ferry_operator_audit IN SHARE MODE', [], () =>
      replay('--statement-timeout', '500ms'),
    );
    expect(answer.code).toBe(1);
    const error = (JSON.parse(answer.lines[0]!) as { error: { code: string } }).error;
    expect(error.code).toMatch(/FERRY_TIMEOUT|FERRY_OUTCOME_UNKNOWN/);
    // The spec: generate one UUID per intended request and reuse it after timeouts. The CLI made
    // one up; its failure answer must say which, or the operator cannot retry idempotently.
    const uuids = JSON.stringify(answer.lines).match(
      /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g,
    );
    const [requestId] = (uuids ?? []).filter((id) => id !== source);
    expect(requestId).toBeDefined();
    // Retried with that id once the database answers: the same request, not a second copy.
    const retried = await replay('--request-id', requestId!);
    expect(retried.code).toBe(0);
    const results = (JSON.parse(retried.lines[0]!) as { results: Array<{ outcome: string }> }).results;
    expect(results).toEqual([expect.objectContaining({ requestId })]);
    expect(['accepted', 'duplicate']).toContain(results[0]!.outcome);
  });
});
