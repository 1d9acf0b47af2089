// Review finding (failed first): without kysely installed, `@ferry/core/kysely` failed with Node's bare
// MODULE_NOT_FOUND (a require stack into ferry's dist), unlike the other optional peers.
describe('kysely is an optional peer dependency', () => {
  const missing = () => {
    throw Object.assign(new Error("Cannot find module 'kysely'"), { code: 'MODULE_NOT_FOUND' });
  };

  test('importing @ferry/core/kysely without it installed is a FerryConfigError naming the package', () => {
    jest.isolateModules(() => {
      jest.doMock('kysely', missing);
      let thrown: unknown;
      try {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        require('@ferry/core/kysely');
      } catch (error) {
        thrown = error;
      }
      // A FerryConfigError of the isolated module registry (so matched by its code, not its class).
      expect(thrown).toMatchObject({ code: 'FERRY_CONFIG_INVALID', option: '@ferry/core/kysely' });
      expect((thrown as Error).message).toMatch(/kysely.*npm install kysely@/);
    });
  });

  test('@ferry/core itself loads without kysely', () => {
    jest.isolateModules(() => {
      jest.doMock('kysely', missing);
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const core = require('@ferry/core') as typeof import('@ferry/core');
      expect(typeof core.emit).toBe('function');
    });
  });
});
