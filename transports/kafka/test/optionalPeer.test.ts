describe('@platformatic/kafka is an optional peer dependency', () => {
  test("a 'platformatic' client without the package installed is a FerryConfigError naming it", () => {
    jest.isolateModules(() => {
      jest.doMock('@platformatic/kafka', () => {
        throw Object.assign(new Error("Cannot find module '@platformatic/kafka'"), {
          code: 'MODULE_NOT_FOUND',
        });
      });
      const { platformaticKafka } =
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        require('../src/client/platformatic') as typeof import('../src/client/platformatic');
      let thrown: unknown;
      try {
        platformaticKafka();
      } catch (error) {
        thrown = error;
      }
      // A FerryConfigError of the isolated module registry (so matched by its code, not its class).
      expect(thrown).toMatchObject({ code: 'FERRY_CONFIG_INVALID', option: 'client' });
      expect((thrown as Error).message).toMatch(/npm install @platformatic\/kafka@\^1\.35\.0/);
    });
  });
});
