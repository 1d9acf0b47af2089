/**
 * review6 finding (7a23fe1 covered only the outbox): a receipt row in ferry_inbox_receipts
 * inserted by SQL (a migration from another inbox library, a hand-written fix) whose payload holds
 * a number JSON.parse changes was handed to the handler altered: the driver parsed the jsonb, so
 * 12345678901234567891 (exact in PostgreSQL's numeric) reached the handler as
 * 12345678901234567000 and the receipt was COMPLETED. accept() refuses such bodies; the worker now
 * reads the payload as text and makes such a receipt DEAD at once (invalid_payload, naming the
 * path), its neighbours in the same claim processed as usual, with either executor.
 * A float accept() took at 1e21 or above (jsonb writes it back in plain digits) is no such number.
 */
import { Pool } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { pgTransactions, type InboxHandler, type InboxOptions, type Inbox } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message, receiptRow, recorder } from './helpers';

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

/** Inserts a receipt the way SQL outside ferry does; `payload` is jsonb text. Resolves its id. */
async function insertBySql(
  consumer: string,
  messageId: string,
  payload: string,
  headers = '{}',
): Promise<string> {
  const [row] = await t.db.query<{ id: string }>(
    `INSERT INTO ferry_inbox_receipts (tenant_id, consumer, message_id, payload, payload_fingerprint,
       payload_bytes, max_attempts, status, next_attempt_at, headers)
     VALUES (NULL, $1, $2, $3::text::jsonb, 'f', octet_length($3::text), 5, 'PENDING', now() - interval '1 minute',
       $4::text::jsonb)
     RETURNING id::text AS id`,
    [consumer, messageId, payload, headers],
  );
  return row!.id;
}

describe.each(executors)('with the %s executor', (name, make) => {
  const consumer = `c-big-${name}`;

  test('a SQL-inserted receipt whose payload holds a number JSON.parse changes goes DEAD, never reaching the handler', async () => {
    const faults: Array<[string, string, string]> = [
      ['big', '{"orderId": 12345678901234567891}', 'integer beyond 2^53-1 at $.orderId'],
      ['tiny', '{"items": [{"sku": "a"}, {"qty": 1e-400}]}', 'too small for a JavaScript number'],
      ['huge', '{"a": {"b c": [1e400]}}', 'beyond the range of a JavaScript number'],
      ['array', '[12345678901234567891]', 'payload is an array, not a JSON object'],
    ];
    const ids = new Map<string, string>();
    for (const [key, payload] of faults) ids.set(key, await insertBySql(consumer, `m-${key}`, payload));
    // Headers the handler's context types as strings: a number, a nested object, not an object.
    const headerFaults: Array<[string, string, string]> = [
      ['header-number', '{"h": 1}', 'headers: "h" is a number, not a string'],
      ['header-object', '{"h": {"a": "b"}}', 'headers: "h" is an object, not a string'],
      ['headers-array', '["h"]', 'headers is an array, not a JSON object of strings'],
    ];
    for (const [key, headers] of headerFaults)
      ids.set(key, await insertBySql(consumer, `m-${key}`, '{"n": 1}', headers));
    faults.push(...headerFaults.map(([key, , reason]): [string, string, string] => [key, '', reason]));
    ids.set('ok', await insertBySql(consumer, 'm-ok', '{"orderId": 42, "note": "12345678901234567891"}'));

    const seen: unknown[] = [];
    const { events, observer } = recorder();
    const handler: InboxHandler<unknown> = async (payload) => {
      seen.push(payload);
    };
    const inbox = make({
      observer,
      worker: { consumers: [consumer], concurrency: 8 },
      handlers: { [consumer]: handler },
    });
    expect(await inbox.runOnce()).toMatchObject({ claimed: 8, completed: 1, dead: 7 });

    expect(seen).toEqual([{ orderId: 42, note: '12345678901234567891' }]);
    expect(await receiptRow(t, ids.get('ok')!)).toMatchObject({ status: 'COMPLETED' });
    for (const [key, , reason] of faults) {
      const row = await receiptRow(t, ids.get(key)!);
      expect([key, row['status'], row['attempts']]).toEqual([key, 'DEAD', 1]);
      expect(row['last_error']).toContain('FERRY_INVALID_PAYLOAD');
      expect(row['last_error']).toContain(reason);
    }
    expect((await receiptRow(t, ids.get('tiny')!))['last_error']).toContain('$.items[1].qty');
    expect((await receiptRow(t, ids.get('huge')!))['last_error']).toContain('at $.a.b c[0]');
    const dead = events.filter((e) => e.type === 'dead');
    expect(dead.map((e) => (e.type === 'dead' ? e.reason : null))).toEqual(
      faults.map(() => 'invalid_payload'),
    );
    const [stored] = await t.db.query<{ exact: string }>(
      `SELECT payload->>'orderId' AS exact FROM ferry_inbox_receipts WHERE id = $1::uuid`,
      [ids.get('big')],
    );
    expect(stored?.exact).toBe('12345678901234567891');
  });

  test('a receipt accepted with floats of 1e21 or more is processed with the exact values', async () => {
    const payload = { avogadro: 6.02214076e23, big: 1e21, negative: -1e21, huge: 1.5e300, safe: 2 ** 53 - 1 };
    const seen: unknown[] = [];
    const floats = `${consumer}-floats`;
    const inbox = make({
      worker: { consumers: [floats] },
      handlers: {
        [floats]: async (received: unknown) => {
          seen.push(received);
        },
      },
    });
    const { record } = await inbox.accept(message({ consumer: floats, payload }));
    expect(await inbox.runOnce()).toMatchObject({ claimed: 1, completed: 1 });
    expect(seen).toEqual([payload]);
    expect(await receiptRow(t, record.id)).toMatchObject({ status: 'COMPLETED', last_error: null });
  });
});
