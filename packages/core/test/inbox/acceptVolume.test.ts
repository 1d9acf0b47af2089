import { INBOX_DEFAULTS } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message } from './helpers';

/**
 * A batch is one statement parameter: PostgreSQL's limits on one jsonb value (268,435,455 bytes
 * of array elements) must not turn a batch of valid inputs, each within maxPayloadBytes, into a
 * batch-wide failure.
 */
describe('inbox acceptance of a large batch', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it('accepts a batch of payloads at maxPayloadBytes whose total passes 256 MiB', async () => {
    // Over 256 MiB in one acceptance statement: longer than the default statementTimeoutMs (30 s)
    // on a busy machine, which is what the option is there to raise.
    const inbox = makeInbox(t.prisma, { statementTimeoutMs: 600_000 });
    const filler = 'x'.repeat(INBOX_DEFAULTS.maxPayloadBytes - 100);
    const inputs = Array.from({ length: 1_040 }, (_, i) => message({ payload: { i, filler } }));
    // Text that is valid but escaped in JSON, stored as given on either way of reading $1.
    const odd = `m-🚀-\u200f-"\\u0000\\-${Date.now()}`;
    const headers = JSON.parse('{"__proto__":"p","k\\"\\\\":"🚀\\u0001"}') as Record<string, string>;
    inputs[7] = { ...inputs[7]!, messageId: odd, type: 'ty"pe\\', headers } as (typeof inputs)[number];
    const results = await inbox.acceptMany(inputs);
    expect(results.map((r) => r.kind)).toEqual(inputs.map(() => 'accepted'));
    const [row] = await t.db.query<{ n: number; bytes: string }>(
      `SELECT count(*)::int AS n, sum(payload_bytes)::text AS bytes FROM ferry_inbox_receipts
       WHERE message_id = ANY($1::text[]) AND payload->>'filler' = $2`,
      [inputs.map((input) => input.messageId), filler],
    );
    expect(row?.n).toBe(inputs.length);
    expect(Number(row?.bytes)).toBeGreaterThan(268_435_455);
    const [stored] = await t.db.query<{ message_type: string; headers: Record<string, string> }>(
      'SELECT message_type, headers FROM ferry_inbox_receipts WHERE message_id = $1',
      [odd],
    );
    expect(stored?.message_type).toBe('ty"pe\\');
    expect(Object.entries(stored?.headers ?? {}).sort()).toEqual(Object.entries(headers).sort());
    // Half a gigabyte of JSON through one statement: 20-40 s here, more when the machine is busy.
  }, 180_000);
});
