/**
 * Each optional peer dependency of @ferry/core, missing, makes importing the entry point that needs
 * it a FerryConfigError naming the entry point and the npm command, and @ferry/core itself loads.
 * Review finding (failed first): without kysely, `@ferry/core/kysely` failed with Node's bare
 * MODULE_NOT_FOUND (a require stack into ferry's dist), unlike `@ferry/core/metrics`.
 */
describe.each([
  ['prom-client', '@ferry/core/metrics', /prom-client.*npm install prom-client@\^15/],
  ['kysely', '@ferry/core/kysely', /kysely.*npm install kysely@/],
])('%s is an optional peer dependency', (peer, entry, message) => {
  const withoutPeer = (run: () => void) =>
    jest.isolateModules(() => {
      jest.doMock(peer, () => {
        throw Object.assign(new Error(`Cannot find module '${peer}'`), { code: 'MODULE_NOT_FOUND' });
      });
      run();
    });

  test(`importing ${entry} without it installed is a FerryConfigError naming the package`, () => {
    withoutPeer(() => {
      let thrown: unknown;
      try {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        require(entry);
      } catch (error) {
        thrown = error;
      }
      // A FerryConfigError of the isolated module registry (so matched by its code, not its class).
      expect(thrown).toMatchObject({ code: 'FERRY_CONFIG_INVALID', option: entry });
      expect((thrown as Error).message).toMatch(message);
    });
  });

  test('@ferry/core itself loads without it', () => {
    withoutPeer(() => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const core = require('@ferry/core') as typeof import('@ferry/core');
      expect(typeof core.emit).toBe('function');
    });
  });
});
