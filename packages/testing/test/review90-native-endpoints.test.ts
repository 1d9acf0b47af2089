/**
 * Review 90, failing test: on the native path `startFerryServices` hands out endpoints nobody
 * checked.
 *
 * What I did: as a user with my own services, `FERRY_DATABASE_URL` (or `FERRY_AMQP_URL`,
 * `FERRY_KAFKA_BROKERS`, `FERRY_SQS_ENDPOINT`) pointing at a port I mistyped, then
 * `startFerryServices({ services: [...], mode: 'native' })`, as the README documents ("endpoints
 * are FERRY_DATABASE_URL, ... or the local defaults").
 * What happened: it resolved with the mistyped endpoint. `scripts/services up` only looks at its
 * own 127.0.0.1 default ports (5432, 5672, 9092, 9324), found ferry's services there and said
 * ready; the first connection of the user's test then failed (or hung) far from the cause. With
 * nothing on the default port the script would even start a machine service nobody asked for.
 * What should happen: an endpoint the user named is the user's own service: the script is not run
 * for it, and every endpoint handed out must answer (a TCP connection within a deadline), else a
 * FERRY_CONFIG_INVALID naming the variable and the endpoint (never a password).
 */
import path from 'node:path';
import { startFerryServices } from '@ferry/testing';
import { closedPort } from '../../../test-support/closedPort';
import { restoreEnvAfterEach } from './support/restoredEnv';

const script = path.resolve(__dirname, '../../../scripts/services');

const VARIABLES = ['FERRY_DATABASE_URL', 'FERRY_AMQP_URL', 'FERRY_KAFKA_BROKERS', 'FERRY_SQS_ENDPOINT'];

describe('review90: startFerryServices on the native path checks the endpoints it hands out', () => {
  restoreEnvAfterEach(VARIABLES);

  it.each([
    ['postgres', 'FERRY_DATABASE_URL', (port: number) => `postgresql://app:s3cret@127.0.0.1:${port}/apptest`],
    ['rabbitmq', 'FERRY_AMQP_URL', (port: number) => `amqp://app:s3cret@127.0.0.1:${port}/myvhost`],
    ['kafka', 'FERRY_KAFKA_BROKERS', (port: number) => `127.0.0.1:${port}`],
    ['sqs', 'FERRY_SQS_ENDPOINT', (port: number) => `http://127.0.0.1:${port}`],
  ] as const)(
    '%s: a %s on a port nothing listens on is FERRY_CONFIG_INVALID naming it',
    async (service, variable, endpoint) => {
      const port = await closedPort();
      process.env[variable] = endpoint(port);
      const started = startFerryServices({ services: [service], mode: 'native', nativeScript: script });
      const error = await started.then(
        () => undefined,
        (e: unknown) => e as Error & { code?: string; option?: string },
      );
      expect(error).toMatchObject({ code: 'FERRY_CONFIG_INVALID', option: variable });
      expect(error?.message).toContain(`127.0.0.1:${port}`);
      expect(error?.message).not.toContain('s3cret');
    },
    60_000,
  );

  it('one broker of FERRY_KAFKA_BROKERS that does not answer is named', async () => {
    const port = await closedPort();
    process.env.FERRY_KAFKA_BROKERS = `127.0.0.1:9092,127.0.0.1:${port}`;
    await expect(
      startFerryServices({ services: ['kafka'], mode: 'native', nativeScript: script }),
    ).rejects.toMatchObject({
      code: 'FERRY_CONFIG_INVALID',
      option: 'FERRY_KAFKA_BROKERS',
      message: expect.stringContaining(`127.0.0.1:${port}`),
    });
  }, 60_000);

  it('a FERRY_DATABASE_URL that is no URL is FERRY_CONFIG_INVALID naming it', async () => {
    process.env.FERRY_DATABASE_URL = 'postgres//127.0.0.1:5432/test';
    await expect(
      startFerryServices({ services: ['postgres'], mode: 'native', nativeScript: script }),
    ).rejects.toMatchObject({ code: 'FERRY_CONFIG_INVALID', option: 'FERRY_DATABASE_URL' });
  }, 60_000);

  it("the default endpoints (ferry's own services) are still handed out", async () => {
    for (const name of VARIABLES) delete process.env[name];
    const services = await startFerryServices({
      services: ['postgres', 'rabbitmq'],
      mode: 'native',
      nativeScript: script,
    });
    expect(services.databaseUrl).toBe('postgresql://postgres@127.0.0.1:5432/test');
    expect(services.amqpUrl).toBe('amqp://guest:guest@127.0.0.1:5672');
  }, 120_000);

  it('a FERRY_SERVICES_MODE the user mistyped is refused naming that variable, not the mode option they never passed', async () => {
    const before = process.env.FERRY_SERVICES_MODE;
    process.env.FERRY_SERVICES_MODE = 'docker';
    try {
      await expect(startFerryServices({ services: ['postgres'] })).rejects.toMatchObject({
        code: 'FERRY_CONFIG_INVALID',
        option: 'FERRY_SERVICES_MODE',
      });
      // The option, when given, is named as such.
      await expect(startFerryServices({ mode: 'dockr' as never })).rejects.toMatchObject({ option: 'mode' });
    } finally {
      if (before === undefined) delete process.env.FERRY_SERVICES_MODE;
      else process.env.FERRY_SERVICES_MODE = before;
    }
  });
});
