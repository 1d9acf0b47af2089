import { randomUUID } from 'node:crypto';
import { emitMany, Inbox } from '@ferry/core';
import { relayStore } from '@ferry/core/internal/testing';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from './database';

/**
 * Rows every admin mutation could change, for the admin argument tables: a refused call must
 * leave `state()` (those rows and the audit trail) as it was.
 */
export interface Receipt {
  readonly id: string;
  readonly expectedVersion: number;
}

/** Receipts one inbox scope's mutations would change: DEAD, COMPLETED, an expired claim. */
export interface InboxRows {
  readonly dead: Receipt;
  readonly completed: Receipt;
  readonly claimToken: string;
}

export interface AdminFixture {
  /** Outbox events of tenant `acme`: FAILED, PENDING, an expired claim (`claimToken`), SENT. */
  readonly failed: string;
  readonly pending: string;
  readonly claimToken: string;
  readonly tenant: InboxRows;
  readonly global: InboxRows;
  /** After every fixture's timestamps: a purge before it would take them. */
  readonly later: Date;
}

export interface AdminDatabase {
  /** The test database (after beforeAll). */
  readonly t: () => TestDatabase;
  /** Fresh rows for one table row. */
  readonly fixture: () => Promise<AdminFixture>;
  /** Every row a refused call could have changed, and the audit trail. */
  readonly state: () => Promise<unknown>;
}

/** A test database for the file (beforeAll / afterAll) with an inbox of consumer `work`. */
export function useAdminDatabase(): AdminDatabase {
  let t: TestDatabase;
  let inbox: Inbox;
  beforeAll(async () => {
    t = await createTestDatabase();
    inbox = new Inbox(t.prisma, {
      global: 'shared',
      logger: pino({ level: 'silent' }),
      handlers: { work: async () => {} },
    });
  });
  afterAll(async () => {
    await inbox.close();
    await t.drop();
  });

  async function event(status: 'PENDING' | 'PROCESSING' | 'FAILED' | 'SENT', token = randomUUID()) {
    const { ids } = await emitMany(t.db, [{ type: 'args.test', payload: {}, tenantId: 'acme' }]);
    const id = ids[0]!;
    if (status === 'PENDING') return id;
    await t.db.execute(
      `UPDATE outbox_events SET status = 'PROCESSING', claim_token = $2::uuid, claimed_at = now(),
         claim_count = claim_count + 1, lease_expires_at = now() + $3::int * interval '1 minute'
         WHERE id = $1::uuid`,
      [id, token, status === 'PROCESSING' ? -1 : 10],
    );
    if (status === 'FAILED' || status === 'SENT') {
      const kind = status === 'FAILED' ? 'permanent' : 'sent';
      await relayStore(t.db).complete(token, [
        { id, kind, error: status === 'FAILED' ? 'boom' : null, delayMs: 0 },
      ]);
    }
    const [row] = await t.db.query<{ status: string }>(
      'SELECT status FROM outbox_events WHERE id = $1::uuid',
      [id],
    );
    expect(row?.status).toBe(status);
    return id;
  }

  async function receipt(tenantId: string | null, set: string, values: unknown[] = []): Promise<Receipt> {
    const { record } = await inbox.accept({
      consumer: 'work',
      messageId: randomUUID(),
      tenantId,
      payload: {},
    });
    const [row] = await t.db.query<{ row_version: number }>(
      `UPDATE ferry_inbox_receipts SET ${set} WHERE id = $1::uuid RETURNING row_version`,
      [record.id, ...values],
    );
    return { id: record.id, expectedVersion: row!.row_version };
  }

  async function inboxRows(tenantId: string | null): Promise<InboxRows> {
    const claimToken = randomUUID();
    return {
      dead: await receipt(tenantId, `status = 'DEAD', dead_at = now()`),
      completed: await receipt(tenantId, `status = 'COMPLETED', completed_at = now() - interval '1 hour'`),
      claimToken:
        (await receipt(
          tenantId,
          `status = 'PROCESSING', claim_token = $2::uuid, attempts = 1, lease_expires_at = now() - interval '1 minute'`,
          [claimToken],
        )) && claimToken,
    };
  }

  return {
    t: () => t,
    async fixture() {
      const claimToken = randomUUID();
      await event('SENT');
      await event('PROCESSING', claimToken);
      return {
        failed: await event('FAILED'),
        pending: await event('PENDING'),
        claimToken,
        tenant: await inboxRows('acme'),
        global: await inboxRows(null),
        later: new Date(Date.now() + 86_400_000),
      };
    },
    async state() {
      return {
        events: await t.db.query(
          `SELECT id::text, status, retry_count, claim_token::text, last_error FROM outbox_events ORDER BY id`,
        ),
        receipts: await t.db.query(
          `SELECT id::text, status, row_version, attempts, claim_token::text, payload IS NULL AS purged
             FROM ferry_inbox_receipts ORDER BY id`,
        ),
        audit: await t.db.query(`SELECT count(*)::int AS n FROM ferry_operator_audit`),
      };
    },
  };
}
