/**
 * Review 91, failing test: since review 90 `startFerryServices`' native path refuses
 * FERRY_DATABASE_URL forms that pg connects with.
 *
 * What I did: set FERRY_DATABASE_URL to my PostgreSQL in a form node-postgres documents (its Unix
 * socket by a URL-encoded host, or by `?host=`, the host in the query string, a URL with no host
 * (pg's localhost), pg's `socket:` URL), checked that pg connects with it, then
 * `startFerryServices({ services: ['postgres'], mode: 'native' })`.
 * What happened: FERRY_CONFIG_INVALID: the endpoint probe reads the URL on its own (WHATWG URL,
 * `?host=` only when it is a socket), so it probed `%2fvar%2frun%2fpostgresql:5432`, said "names no
 * host", or probed the URL's host instead of the `?host=` pg connects to; before review 90 these
 * were handed out and worked.
 * What should happen: the probe goes where pg goes (pg's own reading of the URL).
 */
import { Client } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { startFerryServices } from '@ferry/testing';
import { closedPort } from '../../../test-support/closedPort';

const SOCKET_DIR = '/var/run/postgresql';

describe('review91: the native path hands out a FERRY_DATABASE_URL pg connects with', () => {
  const saved = process.env.FERRY_DATABASE_URL;
  afterEach(() => {
    if (saved === undefined) delete process.env.FERRY_DATABASE_URL;
    else process.env.FERRY_DATABASE_URL = saved;
  });

  it.each([
    [
      'its socket by a URL-encoded host',
      async () => `postgresql://postgres@${encodeURIComponent(SOCKET_DIR)}/test`,
    ],
    ['its socket by ?host=', async () => `postgresql://postgres@/test?host=${SOCKET_DIR}`],
    [
      'its host in ?host= (the URL host unused)',
      async () => `postgresql://postgres@nowhere.invalid/test?host=127.0.0.1`,
    ],
    [
      'its port in ?port=',
      async () => `postgresql://postgres@127.0.0.1:${await closedPort()}/test?port=5432`,
    ],
    ['no host (pg: localhost)', async () => 'postgresql://postgres@/test'],
  ])(
    '%s',
    async (_form, url) => {
      const databaseUrl = await url();
      const client = listened(new Client({ connectionString: databaseUrl }));
      await client.connect();
      await client.end();
      process.env.FERRY_DATABASE_URL = databaseUrl;
      const services = await startFerryServices({ services: ['postgres'], mode: 'native' });
      expect(services.databaseUrl).toBe(databaseUrl);
    },
    60_000,
  );

  it('a ?port= nothing listens on is still refused, naming the variable', async () => {
    const port = await closedPort();
    process.env.FERRY_DATABASE_URL = `postgresql://postgres@127.0.0.1:5432/test?port=${port}`;
    await expect(startFerryServices({ services: ['postgres'], mode: 'native' })).rejects.toMatchObject({
      code: 'FERRY_CONFIG_INVALID',
      option: 'FERRY_DATABASE_URL',
      message: expect.stringContaining(`${port}`),
    });
  }, 60_000);
});
