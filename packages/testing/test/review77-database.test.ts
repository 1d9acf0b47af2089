/**
 * Review 77 (hostile user of recreateDatabase / dropDatabase). README: "`dropDatabase(url, {
 * through })` Drops the database in `url` ... Both connect to another database of the server to
 * do so: `through` (a name, or a URL with its own credentials; default `postgres`)"; and a `url`
 * "that is missing or no URL" is refused with FERRY_CONFIG_INVALID naming `url`.
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { dropDatabase } from '@ferry/testing';
import { adminQuery, serverUrl } from '../../../test-support/database';

function onServer(database: string, host = new URL(serverUrl()).host): string {
  const url = new URL(serverUrl());
  url.host = host;
  url.pathname = `/${database}`;
  return url.toString();
}

async function databaseExists(name: string): Promise<boolean> {
  const client = listened(new Client({ connectionString: serverUrl() }));
  await client.connect();
  try {
    const { rows } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    return rows.length === 1;
  } finally {
    await client.end();
  }
}

describe('review 77: dropDatabase', () => {
  const victim = `review77_victim_${randomBytes(4).toString('hex')}`;
  afterAll(() => adminQuery(`DROP DATABASE IF EXISTS ${victim} WITH (FORCE)`));

  // A CI set-up with a test server (url) and an admin URL for `through` that points at another
  // server (staging, the developer's own): the drop runs on the `through` server and drops the
  // database of that name there, a database the url does not name. recreateDatabase likewise
  // drops and creates on the `through` server, then migrates the url's database.
  test("never drops a database on a server other than the url's: a `through` URL naming another server is refused", async () => {
    await adminQuery(`CREATE DATABASE ${victim}`);
    // The url names a server on port 1 (nothing listens there); `through` names the real one.
    const url = onServer(victim, '127.0.0.1:1');
    const outcome = await dropDatabase(url, { through: onServer('postgres') }).then(
      () => 'resolved',
      (error: unknown) => error,
    );
    expect({ victimStillExists: await databaseExists(victim) }).toEqual({ victimStillExists: true });
    expect(outcome).toMatchObject({ code: 'FERRY_CONFIG_INVALID' });
  });

  // The check "a lower-case identifier" lets through names PostgreSQL reserves (user, order,
  // table, ...) and the name is put into DROP/CREATE DATABASE unquoted: a raw syntax error.
  test('a database named like a reserved word (`order`) is dropped, or refused as FERRY_CONFIG_INVALID, not a pg syntax error', async () => {
    const outcome = await dropDatabase(onServer('order')).then(
      () => 'dropped',
      (error: unknown) => (error as { code?: unknown }).code,
    );
    expect(['dropped', 'FERRY_CONFIG_INVALID']).toContain(outcome);
  });

  test('a url whose database name is malformed percent-encoding is FERRY_CONFIG_INVALID naming url, not a URIError', async () => {
    const error = await dropDatabase(onServer('orders%zz')).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'FERRY_CONFIG_INVALID', message: expect.stringMatching(/url/) });
  });
});
