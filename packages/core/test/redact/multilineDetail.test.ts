/**
 * PostgreSQL prints a text value with its newlines as they are, in a key violation's detail
 * (`Key (api_token)=(line1\nsecret) already exists.`) and a CHECK violation's (`Failing row
 * contains (line1\nsecret, x).`): KEY_DETAIL and FAILING_ROW (redact/keyDetail.ts) read the values
 * across lines, so the FerryError translateDbError makes (message and cause) holds no line of the
 * value. First found by the wip/review probe multilineDetail.test.ts.
 */
import { inspect } from 'node:util';
import pg from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { translateDbError } from '../../src/sql/dbErrors';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

const SECRET = 'hunter2secret';
let t: TestDatabase;
let client: pg.Client;
beforeAll(async () => {
  t = await createTestDatabase();
  client = listened(new pg.Client({ connectionString: t.url }));
  await client.connect();
  await client.query(`CREATE TABLE creds (api_token text UNIQUE, note text CHECK (note <> 'x'))`);
  await client.query(`INSERT INTO creds VALUES ($1, 'a')`, [`line1\n${SECRET}`]);
});
afterAll(async () => {
  await client.end();
  await t.drop();
});

async function failure(sql: string, values: unknown[]): Promise<unknown> {
  return client.query(sql, values).then(
    () => 'no error',
    (error: unknown) => error,
  );
}

it('a unique violation on a sensitive column, the value on two lines', async () => {
  const error = await failure(`INSERT INTO creds VALUES ($1, 'b')`, [`line1\n${SECRET}`]);
  const ferry = translateDbError(error, 'probe');
  expect(inspect(ferry, { depth: 10 })).not.toContain(SECRET);
  expect((ferry.cause as { detail: string }).detail).toBe('Key (api_token)=([redacted]) already exists.');
});

it('a CHECK violation: the failing row, a value on two lines', async () => {
  const error = await failure(`INSERT INTO creds VALUES ($1, 'x')`, [`other\n${SECRET}`]);
  const ferry = translateDbError(error, 'probe');
  expect(inspect(ferry, { depth: 10 })).not.toContain(SECRET);
  expect((ferry.cause as { detail: string }).detail).toBe('Failing row contains ([redacted]).');
});
