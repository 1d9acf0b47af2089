/**
 * Defect (failed first): a body float whose value is an integer from 2^53 to 1e21 was
 * dead-lettered after parseJsonObjectBody had accepted it. Python's json.dumps(1e16) writes
 * `1e+16`, Java's Jackson `1.5E17`: floats, which the README says read as the nearest double.
 * 1. acceptance held the parsed payload to the rules for a value an application emits
 *    (numberFault(value, String(value))): String(1.5e17) is digits, so it was refused as an
 *    "integer beyond 2^53-1" (inbox_invalid);
 * 2. jsonb writes 1.5e17 back as 150000000000000000, which the worker's stored read
 *    (storedNumberFault) took for the same thing; only runs of 1e21 or more were excused.
 * Accepted from a body now, and read back exactly; the value an application hands to accept()
 * or emit() itself is still refused (it cannot be known to be a float), as is every stored run of
 * digits that reads as another number.
 */
import { Pool } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { emit, pgTransactions, type Inbox, type InboxHandler, type InboxOptions } from '@ferry/core';
import { parseJsonObjectBody } from '@ferry/core/transport';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message, receiptRow } from './helpers';

let t: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  t = await createTestDatabase();
  pool = listened(new Pool({ connectionString: t.url, max: 4 }));
});
afterAll(async () => {
  await pool.end();
  await t.drop();
});

type Make = (options: InboxOptions<unknown>) => Inbox<unknown>;
const executors: Array<[string, Make]> = [
  ['Prisma', (options) => makeInbox(t.prisma, options as InboxOptions) as Inbox<unknown>],
  ['node-postgres', (options) => makeInbox(pgTransactions(pool) as never, options) as Inbox<unknown>],
];

/** Large doubles as Python (`1e+20`) and Java (`1.5E17`) write them, and one with a fraction. */
const BODY =
  '{"amount":1.5e17,"n":1e20,"neg":-2.5e18,"java":{"list":[1.5E17,-9.2E+18]},"py":1e+16,"f":150000000000000000.0}';
const EXPECTED = {
  amount: 1.5e17,
  n: 1e20,
  neg: -2.5e18,
  java: { list: [1.5e17, -9.2e18] },
  py: 1e16,
  f: 1.5e17,
};

function parsed(body: string): Record<string, unknown> {
  const result = parseJsonObjectBody(body);
  if (!result.ok) throw new Error(`body refused: ${result.detail}`);
  return result.payload;
}

/** Inserts a receipt the way SQL outside ferry does; `payload` is jsonb text. Resolves its id. */
async function insertBySql(consumer: string, messageId: string, payload: string): Promise<string> {
  const [row] = await t.db.query<{ id: string }>(
    `INSERT INTO ferry_inbox_receipts (tenant_id, consumer, message_id, payload, payload_fingerprint,
       payload_bytes, max_attempts, status, next_attempt_at)
     VALUES (NULL, $1, $2, $3::text::jsonb, 'f', octet_length($3::text), 5, 'PENDING', now() - interval '1 minute')
     RETURNING id::text AS id`,
    [consumer, messageId, payload],
  );
  return row!.id;
}

describe.each(executors)('with the %s executor', (name, make) => {
  test('a body with floats from 2^53 to 1e21 is accepted and its handler gets exactly those doubles', async () => {
    const consumer = `c-floats-${name}`;
    const seen: unknown[] = [];
    const handler: InboxHandler<unknown> = async (payload) => {
      seen.push(payload);
    };
    const inbox = make({ worker: { consumers: [consumer] }, handlers: { [consumer]: handler } });
    const [result] = await inbox.acceptMany([message({ consumer, payload: parsed(BODY) })]);
    expect(result).toEqual({ kind: 'accepted', id: expect.any(String) });
    expect(await inbox.runOnce()).toMatchObject({ claimed: 1, completed: 1, dead: 0 });
    expect(seen).toEqual([EXPECTED]);
    const row = await receiptRow(t, (result as { id: string }).id);
    expect([row['status'], row['last_error']]).toEqual(['COMPLETED', null]);
  });

  test('a SQL-inserted receipt is processed when each run of digits reads back as itself, DEAD when one reads as another number', async () => {
    const consumer = `c-sql-floats-${name}`;
    const seen: unknown[] = [];
    const inbox = make({
      worker: { consumers: [consumer] },
      handlers: {
        [consumer]: async (payload: unknown) => {
          seen.push(payload);
        },
      },
    });
    const exact = await insertBySql(
      consumer,
      'exact',
      '{"amount": 150000000000000000, "n": 100000000000000000000, "neg": -2500000000000000000}',
    );
    const inexact = new Map([
      ['odd', '{"id": 9007199254740993}'],
      ['long', '{"id": 12345678901234567891}'],
      ['near', '{"amount": 150000000000000001}'],
    ]);
    const ids = new Map<string, string>();
    for (const [key, payload] of inexact) ids.set(key, await insertBySql(consumer, key, payload));

    expect(await inbox.runOnce()).toMatchObject({ claimed: 4, completed: 1, dead: 3 });
    expect(seen).toEqual([{ amount: 1.5e17, n: 1e20, neg: -2.5e18 }]);
    expect(await receiptRow(t, exact)).toMatchObject({ status: 'COMPLETED', last_error: null });
    for (const [key, id] of ids) {
      const row = await receiptRow(t, id);
      expect([key, row['status'], row['last_error']]).toEqual([
        key,
        'DEAD',
        expect.stringContaining('integer beyond 2^53-1 at $.'),
      ]);
    }
  });
});

describe('the exception is for a parsed body only', () => {
  const consumer = 'c-refused';
  let inbox: Inbox<unknown>;
  beforeAll(() => {
    inbox = makeInbox(t.prisma, { handlers: { [consumer]: async () => undefined } }) as Inbox<unknown>;
  });

  /** What accept() answers for `payload`: 'accepted', or the rule and reason it refused it by. */
  async function acceptance(payload: Record<string, unknown>): Promise<unknown> {
    try {
      await inbox.accept(message({ consumer, payload }));
      return 'accepted';
    } catch (error) {
      const details = (error as { details?: { rule?: string; reason?: string } }).details;
      return [details?.rule, details?.reason];
    }
  }

  const unsafe = ['inbox_invalid', expect.stringContaining('integer beyond 2^53-1')];

  test('accept() refuses the same value handed to it by the application, also a parsed payload copied or wrapped', async () => {
    const payload = parsed('{"amount":1.5e17}');
    expect(await acceptance({ amount: 1.5e17 })).toEqual(unsafe);
    expect(await acceptance({ ...payload })).toEqual(unsafe);
    expect(await acceptance({ wrapped: payload })).toEqual(unsafe);
    expect(await acceptance({ n: 1e20 })).toEqual(unsafe);
    expect(await acceptance(payload)).toBe('accepted');
  });

  test('every other rule still applies to a parsed body', async () => {
    expect(await acceptance(parsed('{"note":"a\\u0000b","amount":1.5e17}'))).toEqual([
      'invalid_text',
      expect.stringContaining('NUL'),
    ]);
    const deep = `${'{"a":'.repeat(70)}1.5e17${'}'.repeat(70)}`;
    expect(await acceptance(parsed(deep))).toEqual(['payload_too_deep', expect.any(String)]);
  });

  test('emit() refuses a parsed body holding such a float: a ferry consumer would dead-letter the digits JSON.stringify writes', async () => {
    const error: unknown = await emit(t.db, { type: 'floats', payload: parsed('{"amount":1.5e17}') }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({
      code: 'FERRY_VALIDATION_FAILED',
      field: 'payload.amount',
      reason: expect.stringContaining('integer beyond 2^53-1'),
    });
  });
});
