/**
 * Saves the environment variables `names` now and puts them back as they were after each test
 * (deleted when they were unset): for tests that set FERRY_* variables on this process.
 */
export function restoreEnvAfterEach(names: readonly string[]): void {
  const saved = Object.fromEntries(names.map((name) => [name, process.env[name]]));
  afterEach(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
}
