/**
 * Review 135 (a hostile application's emit), failing on main: emitMany sent all its events in one
 * statement, each column as one array parameter, which node-postgres writes as one array literal
 * string (every `"` and `\` of the JSON escaped once more). Past what a JavaScript string can hold
 * (about 2^29 characters) the driver threw `RangeError: Invalid string length`, which emit reported
 * as FERRY_DATABASE_ERROR, retriable: an application retrying it (as the code tells it to) failed
 * for ever, on events each within maxPayloadBytes. Seen with 34 payloads of 16 MiB (an emitter's
 * largest maxPayloadBytes) in 7 s; 2,100 at the default 256 KiB do the same, fewer when their JSON
 * holds quotes (17 payloads of 16 MiB of quotes ran the process out of memory instead). What
 * should happen: every event inserted, in order, in the application's transaction, in as many
 * statements as it takes, none carrying more than MAX_STATEMENT_TEXT_CHARS of JSON (64 Mi
 * characters, its literal at most twice that): what this test checks, with 5 payloads of 16 MiB
 * (inserting the 550 MB that fail on main takes PostgreSQL some 20 s).
 */
import { Pool, type PoolClient } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { createEmitter } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let t: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  t = await createTestDatabase();
  pool = listened(new Pool({ connectionString: t.url, max: 1 }));
});
afterAll(async () => {
  await pool.end();
  await t.drop();
});

/** Characters of the string parameters (and of the strings in array parameters) of each statement `client` sends. */
function statementTexts(client: PoolClient): number[] {
  const texts: number[] = [];
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const [first, second] = args as [unknown, unknown];
    const config = typeof first === 'object' && first !== null ? (first as { values?: unknown }) : {};
    const given = Array.isArray(second) ? second : config.values;
    const values = (Array.isArray(given) ? given : []) as unknown[];
    const chars = values
      .flatMap((value) => (Array.isArray(value) ? (value as unknown[]) : [value]))
      .reduce<number>((n, value) => n + (typeof value === 'string' ? value.length : 0), 0);
    texts.push(chars);
    return query(...args);
  };
  return texts;
}

/** What a statement may carry: 64 Mi characters of JSON (MAX_STATEMENT_TEXT_CHARS), and its other text. */
const STATEMENT_BOUND = 64 * 1024 * 1024 + 1_000;

it('review135: emitMany whose events are more text than one statement carries inserts them all, in order, no statement over the bound', async () => {
  const maxPayloadBytes = 16 * 1024 * 1024;
  const emitter = createEmitter({ limits: { maxPayloadBytes } });
  const text = 'x'.repeat(maxPayloadBytes - 16); // 16 MiB of JSON text: the limit
  const events = Array.from({ length: 5 }, (_, i) => ({ type: `bulk.${i}`, payload: { s: text } }));
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    // lz4 compresses the rows far faster than the default pglz (the test's time, not ferry's).
    await client.query(`SET LOCAL default_toast_compression = 'lz4'`);
    const texts = statementTexts(client);
    const { ids } = await emitter.emitMany(client, events);
    expect(Math.max(...texts)).toBeLessThanOrEqual(STATEMENT_BOUND);
    const rows = await client.query<{ id: string; event_type: string }>(
      'SELECT id::text, event_type FROM outbox_events ORDER BY seq',
    );
    expect(rows.rows.map((row) => row.id)).toEqual(ids);
    expect(rows.rows.map((row) => row.event_type)).toEqual(events.map((e) => e.type));
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
});
