describe('prom-client is an optional peer dependency', () => {
  test('importing @ferry/core/metrics without it installed is a FerryConfigError naming the package', () => {
    jest.isolateModules(() => {
      jest.doMock('prom-client', () => {
        throw Object.assign(new Error("Cannot find module 'prom-client'"), { code: 'MODULE_NOT_FOUND' });
      });
      let thrown: unknown;
      try {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        require('@ferry/core/metrics');
      } catch (error) {
        thrown = error;
      }
      // A FerryConfigError of the isolated module registry (so matched by its code, not its class).
      expect(thrown).toMatchObject({ code: 'FERRY_CONFIG_INVALID', option: '@ferry/core/metrics' });
      expect((thrown as Error).message).toMatch(/prom-client.*npm install prom-client@\^15/);
    });
  });

  test('@ferry/core itself loads without prom-client', () => {
    jest.isolateModules(() => {
      jest.doMock('prom-client', () => {
        throw Object.assign(new Error("Cannot find module 'prom-client'"), { code: 'MODULE_NOT_FOUND' });
      });
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const core = require('@ferry/core') as typeof import('@ferry/core');
      expect(typeof core.combineObservers).toBe('function');
    });
  });
});
