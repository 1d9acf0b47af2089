/**
 * Review 106 (ferry installed from its tarballs): `startFerryServices` in an application's own
 * project, without Docker.
 *
 * What I did: in a fresh application with @ferry/testing from its tarball, no Docker, PostgreSQL
 * and RabbitMQ of my own already listening on 127.0.0.1:5432 and 5672 (the local defaults the
 * README hands out), ran `startFerryServices({ services: ['postgres', 'rabbitmq'] })`, also with
 * FERRY_DATABASE_URL set to that server. What happened: FERRY_CONFIG_INVALID "no scripts/services
 * above <app>; set FERRY_SERVICES_SCRIPT (or nativeScript) to ferry's scripts/services, or make
 * Docker reachable": that script is in ferry's repository, in no tarball, and it would only have
 * reused the services already listening. What should happen: without the script, endpoints that
 * already accept a connection are handed out; one that does not is refused, saying the script that
 * would start it is not there.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startFerryServices } from '@ferry/testing';
import { closedPort } from '../../../test-support/closedPort';

const VARIABLES = [
  'FERRY_DATABASE_URL',
  'FERRY_AMQP_URL',
  'FERRY_PG_PORT',
  'FERRY_SERVICES_SCRIPT',
  'FERRY_SERVICES_MODE',
];

describe('review106: startFerryServices natively, with no scripts/services above the application', () => {
  const saved = Object.fromEntries(VARIABLES.map((name) => [name, process.env[name]]));
  const cwd = process.cwd();
  const appDir = mkdtempSync(path.join(tmpdir(), 'ferry-review106-app-'));

  beforeEach(() => {
    for (const name of VARIABLES) delete process.env[name];
    process.chdir(appDir);
  });

  afterEach(() => {
    process.chdir(cwd);
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  afterAll(() => rmSync(appDir, { recursive: true, force: true }));

  it('hands out the default endpoints the services already listen on', async () => {
    const services = await startFerryServices({ services: ['postgres', 'rabbitmq'], mode: 'native' });
    expect(services.databaseUrl).toBe('postgresql://postgres@127.0.0.1:5432/test');
    expect(services.amqpUrl).toBe('amqp://guest:guest@127.0.0.1:5672');
    await services.stop();
  }, 60_000);

  it('and the FERRY_DATABASE_URL the application names on that server', async () => {
    process.env.FERRY_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';
    const services = await startFerryServices({ services: ['postgres'], mode: 'native' });
    expect(services.databaseUrl).toBe('postgresql://postgres@127.0.0.1:5432/postgres');
  }, 60_000);

  it("refuses a script's endpoint nothing listens on, saying the script that would start it is missing", async () => {
    const port = await closedPort();
    process.env.FERRY_PG_PORT = String(port);
    process.env.FERRY_DATABASE_URL = `postgresql://postgres:s3cret@127.0.0.1:${port}/test`;
    const error = await startFerryServices({ services: ['postgres'], mode: 'native' }).then(
      () => undefined,
      (e: unknown) => e as Error & { code?: string; option?: string },
    );
    expect(error).toMatchObject({ code: 'FERRY_CONFIG_INVALID', option: 'nativeScript' });
    expect(error?.message).toContain(`127.0.0.1:${port}`);
    expect(error?.message).toContain('no scripts/services above');
    expect(error?.message).not.toContain('s3cret');
  }, 60_000);
});
