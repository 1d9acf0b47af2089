/**
 * Review finding (failed first on main). The stored-number guard (storedNumberFault, used by the relay's
 * foreignRowFault and the inbox worker's storedPayload) refuses an integer beyond 2^53-1 only
 * when jsonb's text writes it as bare digits. PostgreSQL writes a numeric with a scale with its
 * zero fraction: a payload built by SQL the usual way, jsonb_build_object / to_jsonb of a
 * numeric(20,1) or numeric(22,2) column, stores 9007199254740993 as `9007199254740993.0`, which
 * numberFault takes for "a float" and lets through. JSON.parse then makes it 9007199254740992:
 * the handler (and the relay's publisher) get a neighbouring order's id, the very loss the
 * guard exists to stop (storedPayload.ts's own example), with no trace. A number whose fraction
 * is only zeros is an integer; the exactness rule of integers should apply to it.
 * Suggested fix: in storedNumberFault (validate/numbers.ts) judge a token `^-?\d+\.0+$` as the
 * integer before its point (the relay and the inbox share it through inexactStoredNumberFault).
 */
import { inexactStoredNumberFault } from '../../src/validate/jsonNumbers';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, receiptRow } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const BUILT = [
  `jsonb_build_object('orderId', 9007199254740993::numeric(20,1))`,
  `jsonb_build_object('orderId', 12345678901234567891::numeric(22,2))`,
];

test('jsonb text of an integer beyond 2^53-1 from a scaled numeric column is refused', async () => {
  for (const sql of BUILT) {
    const [row] = await t.db.query<{ text: string }>(`SELECT (${sql})::text AS text`);
    const text = row!.text;
    // JSON.parse changes it ...
    expect(String((JSON.parse(text) as { orderId: number }).orderId)).not.toBe(
      text.replace(/^.*: (\d+)\..*$/, '$1'),
    );
    // ... so the guard must name it.
    expect([text, inexactStoredNumberFault(text)]).toEqual([text, expect.stringContaining('$.orderId')]);
  }
});

test('an inbox receipt whose payload SQL built from a numeric(20,1) column never reaches the handler altered', async () => {
  const consumer = 'c-scaled';
  const [row] = await t.db.query<{ id: string }>(
    `INSERT INTO ferry_inbox_receipts (tenant_id, consumer, message_id, payload, payload_fingerprint,
       payload_bytes, max_attempts, status, next_attempt_at)
     SELECT NULL, $1, 'm-scaled', p, 'f', octet_length(p::text), 5, 'PENDING', now() - interval '1 minute'
     FROM (SELECT jsonb_build_object('orderId', 9007199254740993::numeric(20,1)) AS p) s
     RETURNING id::text AS id`,
    [consumer],
  );
  const seen: unknown[] = [];
  const inbox = makeInbox(t.prisma, {
    worker: { consumers: [consumer] },
    handlers: {
      [consumer]: async (payload: unknown) => {
        seen.push(payload);
      },
    },
  });
  await inbox.runOnce();
  // On main the handler saw { orderId: 9007199254740992 } and the receipt is COMPLETED.
  expect(seen).toEqual([]);
  expect(await receiptRow(t, row!.id)).toMatchObject({ status: 'DEAD' });
});
