import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { Inbox } from '@ferry/core';
import pino from 'pino';
import { runCli } from '@ferry/cli';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { receiptLock } from '../../core/src/inbox/sql/fragments';
import { captureIo } from './io';

// Review finding (failed first): a forced release drains "until a pass releases fewer rows than its bound", but the
// pass's bound is spent on `running` receipts too: a running receipt at the head of the claim
// ends the drain while releasable receipts of the same claim are still PROCESSING.
describe('inbox release --force with a running receipt', () => {
  let t: TestDatabase;
  let inbox: Inbox;

  beforeAll(async () => {
    t = await createTestDatabase();
    inbox = new Inbox(t.prisma, { logger: pino({ level: 'silent' }), handlers: { work: async () => {} } });
  });
  afterAll(async () => {
    await inbox.close();
    await t.drop();
  });

  it('Review finding (failed first): releases every idle receipt of the claim, however the bound falls', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const { record } = await inbox.accept({
        consumer: 'work',
        messageId: randomUUID(),
        tenantId: 'drain',
        payload: {},
      });
      ids.push(record.id);
    }
    ids.sort();
    const token = randomUUID();
    await t.db.execute(
      `UPDATE ferry_inbox_receipts SET status = 'PROCESSING', claim_token = $1::uuid, attempts = 1,
         lease_expires_at = date_trunc('minute', now()) + interval '5 minutes' WHERE tenant_id = 'drain'`,
      [token],
    );
    // The first receipt (lease, id order) has a live handler transaction (beginHandler's lock).
    const handler = listened(new Client({ connectionString: t.url }));
    await handler.connect();
    try {
      await handler.query('BEGIN');
      await handler.query(`SELECT pg_advisory_xact_lock_shared(${receiptLock('$1::uuid')})`, [ids[0]]);
      const io = captureIo();
      const code = await runCli(
        [
          'inbox',
          'release',
          '--tenant',
          'drain',
          '--claim-token',
          token,
          '--force',
          '--batch-size',
          '1',
          '--database-url',
          t.url,
        ],
        io,
        { FERRY_ACTOR: 'ops@test' },
      );
      const statuses = await t.db.query<{ id: string; status: string }>(
        `SELECT id::text AS id, status FROM ferry_inbox_receipts WHERE tenant_id = 'drain' ORDER BY id`,
      );
      expect({ code, lines: [...io.lines].sort(), statuses: statuses.map((r) => r.status) }).toEqual({
        code: 1,
        lines: [`${ids[0]} running`, `${ids[1]} applied`, `${ids[2]} applied`].sort(),
        statuses: ['PROCESSING', 'PENDING', 'PENDING'],
      });
    } finally {
      await handler.query('ROLLBACK');
      await handler.end();
    }
  });
});
