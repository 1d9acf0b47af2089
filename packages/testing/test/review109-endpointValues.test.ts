/**
 * Review 109, failing tests (loose ends of reviews 106 and 108).
 *
 * 1. startFerryServices' native path threw Node's raw RangeError (ERR_SOCKET_BAD_PORT) for an
 *    endpoint variable whose port is out of range or no number: `FERRY_KAFKA_BROKERS=127.0.0.1:70000`,
 *    a `?port=70000` or `?port=abc` in FERRY_DATABASE_URL (pg reads them as 70000 and NaN). Every
 *    endpoint variable's port is refused as FERRY_CONFIG_INVALID naming the variable, never its
 *    password. Port 0 too: nothing is reached on it.
 * 2. recreateDatabase / dropDatabase reported a server that refused the connection as
 *    `FerryConfigError: invalid option url`, as if the URL were malformed: an unreachable server is
 *    FERRY_DATABASE_UNAVAILABLE (retriable), as everywhere else in ferry.
 */
import path from 'node:path';
import { dockerEndpoint, dropDatabase, recreateDatabase, startFerryServices } from '@ferry/testing';
import { closedPort } from '../../../test-support/closedPort';
import { restoreEnvAfterEach } from './support/restoredEnv';

const script = path.resolve(__dirname, '../../../scripts/services');

const VARIABLES = ['FERRY_DATABASE_URL', 'FERRY_AMQP_URL', 'FERRY_KAFKA_BROKERS', 'FERRY_SQS_ENDPOINT'];

describe('review109: an endpoint variable whose port is out of range is FERRY_CONFIG_INVALID naming it', () => {
  restoreEnvAfterEach(VARIABLES);

  it.each([
    ['kafka', 'FERRY_KAFKA_BROKERS', '127.0.0.1:70000'],
    ['kafka', 'FERRY_KAFKA_BROKERS', '127.0.0.1:9092,127.0.0.1:99999'],
    ['kafka', 'FERRY_KAFKA_BROKERS', '127.0.0.1:0'],
    ['postgres', 'FERRY_DATABASE_URL', 'postgresql://app:s3cret@127.0.0.1:5432/test?port=70000'],
    ['postgres', 'FERRY_DATABASE_URL', 'postgresql://app:s3cret@127.0.0.1:5432/test?port=abc'],
    ['postgres', 'FERRY_DATABASE_URL', 'postgresql://app:s3cret@127.0.0.1:5432/test?port=-1'],
    ['postgres', 'FERRY_DATABASE_URL', 'postgresql://app:s3cret@127.0.0.1:0/test'],
    ['rabbitmq', 'FERRY_AMQP_URL', 'amqp://app:s3cret@127.0.0.1:0'],
    ['rabbitmq', 'FERRY_AMQP_URL', 'amqp://app:s3cret@127.0.0.1:70000'],
    ['sqs', 'FERRY_SQS_ENDPOINT', 'http://app:s3cret@127.0.0.1:0'],
    ['sqs', 'FERRY_SQS_ENDPOINT', 'http://127.0.0.1:abc'],
  ] as const)(
    '%s: %s=%s',
    async (service, variable, value) => {
      process.env[variable] = value;
      const error = await startFerryServices({
        services: [service],
        mode: 'native',
        nativeScript: script,
      }).then(
        () => undefined,
        (e: unknown) => e as Error & { code?: string; option?: string },
      );
      expect(error).toMatchObject({ code: 'FERRY_CONFIG_INVALID', option: variable });
      expect(error?.message).not.toContain('s3cret');
    },
    60_000,
  );
});

it.each(['tcp://127.0.0.1:70000', 'tcp://127.0.0.1:0', 'tcp://:2375', 'tcp://[::1'])(
  'review109: DOCKER_HOST=%s is FERRY_CONFIG_INVALID naming it, not a TypeError or RangeError',
  (value) => {
    expect(() => dockerEndpoint({ DOCKER_HOST: value })).toThrow(
      expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option: 'DOCKER_HOST' }),
    );
  },
);

describe('review109: recreateDatabase and dropDatabase on a server that refuses the connection', () => {
  it.each([
    ['recreateDatabase', (url: string) => recreateDatabase(url)],
    ['dropDatabase', (url: string) => dropDatabase(url)],
  ] as const)(
    '%s is FERRY_DATABASE_UNAVAILABLE naming the server, not an invalid option',
    async (_name, call) => {
      const port = await closedPort();
      const error = await call(`postgresql://app:s3cret@127.0.0.1:${port}/review109_nowhere`).then(
        () => undefined,
        (e: unknown) => e as Error & { code?: string; retriable?: boolean },
      );
      expect(error).toMatchObject({ code: 'FERRY_DATABASE_UNAVAILABLE', retriable: true });
      expect(error?.message).toContain(`127.0.0.1:${port}`);
      expect(error?.message).not.toContain('s3cret');
    },
    60_000,
  );
});
