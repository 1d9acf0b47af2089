import { createHealth, FerryConfigError, type HealthOptions } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

/**
 * Review 111: createHealth took any `transports` entry. One without a `check` function was a
 * `down` readiness check for ever ("t.check is not a function"), and a null entry (a consumer
 * not built yet, `[maybeConsumer && {...}]`) made readiness() and details() reject: the health
 * endpoint threw instead of answering. Each is now refused when health is created.
 */
let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const hostile: [string, unknown, string][] = [
  ['null', null, 'transports[0]'],
  ['undefined', undefined, 'transports[0]'],
  ['a string', 'rabbitmq', 'transports[0]'],
  ['no check', { name: 'rabbitmq' }, 'transports[0].check'],
  ['a check that is no function', { name: 'rabbitmq', check: 'consumer.check' }, 'transports[0].check'],
  ['no name', { check: async () => undefined }, 'transports[0].name'],
  ['an empty name', { name: '', check: async () => undefined }, 'transports[0].name'],
];

describe('createHealth transports (review 111)', () => {
  it.each(hostile)('refuses an entry that is %s, naming it', (_what, entry, option) => {
    const options = { db: t.db, checkSchema: false, transports: [entry] } as unknown as HealthOptions;
    let thrown: unknown;
    try {
      createHealth(options);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(FerryConfigError);
    expect(thrown).toMatchObject({ code: 'FERRY_CONFIG_INVALID', details: { option } });
  });

  it('refuses a hole in a sparse array', () => {
    // eslint-disable-next-line no-sparse-arrays
    const transports = [, { name: 'rabbitmq', check: async () => undefined }];
    expect(() => createHealth({ db: t.db, transports } as unknown as HealthOptions)).toThrow(
      expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option: 'transports[0]' }),
    );
  });

  it('still answers readiness with a good entry beside the database', async () => {
    const health = createHealth({
      db: t.db,
      checkSchema: false,
      transports: [{ name: 'rabbitmq', check: async () => undefined }],
    });
    expect(await health.readiness()).toMatchObject({
      status: 'up',
      checks: [
        { name: 'database', status: 'up' },
        { name: 'transport rabbitmq', status: 'up' },
      ],
    });
  });
});
