/**
 * Review 106 (ferry installed from its tarballs): @platformatic/kafka at a version outside the
 * peer range (^1.35.0).
 *
 * What I did: in a fresh application, `npm install @platformatic/kafka` (the registry's latest is
 * 2.12.1) and @ferry/core and @ferry/kafka from the tarballs, with --legacy-peer-deps (as many
 * NestJS projects install; pnpm and yarn only warn), then published on a connection with
 * `client: 'platformatic'` on Node 20. What happened: every publish answered `unavailable`,
 * "connecting the Kafka producer failed: Promise.withResolvers is not a function", so the relay
 * retried it for ever as a broker outage. What should happen: as when the package is missing, a
 * FerryConfigError on `client` (not retriable) naming the version found and the one needed.
 */
import type { PlatformaticKafka } from '../src/client/platformaticTypes';

type Loader = typeof import('../src/client/platformatic');

/** platformaticKafka() with @platformatic/kafka reporting `version` (undefined: reports none). */
function loadWith(version: string | undefined): { thrown?: unknown; module?: PlatformaticKafka } {
  let outcome: { thrown?: unknown; module?: PlatformaticKafka } = {};
  jest.isolateModules(() => {
    jest.doMock('@platformatic/kafka', () => {
      const actual = jest.requireActual<Record<string, unknown>>('@platformatic/kafka');
      return { ...actual, clientSoftwareVersion: version };
    });
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { platformaticKafka } = require('../src/client/platformatic') as Loader;
    try {
      outcome = { module: platformaticKafka() };
    } catch (error) {
      outcome = { thrown: error };
    }
  });
  return outcome;
}

describe('review106: @platformatic/kafka outside ^1.35.0', () => {
  test.each(['2.12.1', '1.34.0', '0.9.0', '3.0.0-rc.1'])(
    'version %s is a FerryConfigError on client naming it and the range',
    (version) => {
      const { thrown } = loadWith(version);
      // A FerryConfigError of the isolated module registry (so matched by its code, not its class).
      expect(thrown).toMatchObject({ code: 'FERRY_CONFIG_INVALID', option: 'client', retriable: false });
      const message = (thrown as Error).message;
      expect(message).toContain(`@platformatic/kafka ${version} is installed`);
      expect(message).toMatch(/npm install @platformatic\/kafka@\^1\.35\.0/);
    },
  );

  test('a module that reports no version is refused the same way', () => {
    const { thrown } = loadWith(undefined);
    expect(thrown).toMatchObject({ code: 'FERRY_CONFIG_INVALID', option: 'client' });
    expect((thrown as Error).message).toMatch(/npm install @platformatic\/kafka@\^1\.35\.0/);
  });

  test.each(['1.35.0', '1.40.2', '1.99.0'])('version %s loads', (version) => {
    const { thrown, module } = loadWith(version);
    expect(thrown).toBeUndefined();
    expect(typeof module?.Producer).toBe('function');
  });
});
