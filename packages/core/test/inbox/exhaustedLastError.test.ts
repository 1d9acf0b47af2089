/**
 * The expired-claim sweep's last_error stays within the 2,000 characters (JavaScript's length,
 * UTF-16 units) every stored error text keeps: the earlier error is cut to make room for the
 * reason, an astral character (two units, one PostgreSQL character) is never cut in half, and a
 * receipt swept again after a requeue does not get the reason twice (review 83).
 */
import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { MAX_STORED_ERROR_CHARS } from '../../src/redact/redact';
import { claimReceipts } from '../../src/inbox/sql/claim';
import { EXHAUSTED_ERROR, exhaustExpired } from '../../src/inbox/sql/exhaustExpired';
import { textFault } from '../../src/validate/text';
import { makeInbox, message, waitFor } from './helpers';

jest.setTimeout(60_000);

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** The last_error the sweep leaves on an expired, exhausted claim whose last_error was `earlier`. */
async function sweptWith(earlier: string | null): Promise<string> {
  const consumer = `c-${randomUUID()}`;
  const { record } = await makeInbox(t.prisma).accept(message({ consumer }));
  await claimReceipts(t.db, [consumer], 1, 1, 1);
  await t.db.execute('UPDATE ferry_inbox_receipts SET last_error = $2 WHERE id = $1::uuid', [
    record.id,
    earlier,
  ]);
  await waitFor(
    'the claim to expire',
    async () => (await exhaustExpired(t.db, [consumer], 10, 1)).length === 1,
  );
  const [row] = await t.db.query<{ last_error: string }>(
    'SELECT last_error FROM ferry_inbox_receipts WHERE id = $1::uuid',
    [record.id],
  );
  return row!.last_error;
}

it.each([
  ['none', null],
  ['short', 'Error: downstream refused'],
  ['ASCII at the bound', 'x'.repeat(MAX_STORED_ERROR_CHARS)],
  ['astral at the bound', '😀'.repeat(MAX_STORED_ERROR_CHARS / 2)],
  ['astral after one ASCII', `x${'😀'.repeat(MAX_STORED_ERROR_CHARS / 2 - 1)}`],
])('an earlier error (%s) and the reason fit the bound, cut at a whole character', async (_name, earlier) => {
  const swept = await sweptWith(earlier);
  expect({
    withinBound: swept.length <= MAX_STORED_ERROR_CHARS,
    endsWithReason: swept.endsWith(EXHAUSTED_ERROR),
    storable: textFault(swept),
    keepsEarlierHead: swept.startsWith((earlier ?? '').slice(0, 100)),
  }).toEqual({ withinBound: true, endsWithReason: true, storable: null, keepsEarlierHead: true });
});

it('a receipt swept again (requeued, crashed again) keeps one reason', async () => {
  const once = `Error: downstream refused | ${EXHAUSTED_ERROR}`;
  expect(await sweptWith(once)).toBe(once);
});
