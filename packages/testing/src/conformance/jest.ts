// The jest functions the suite registers its cases with: the one load of `@jest/globals` (an
// optional peer), so a test can record what the suite registers (jest.doMock of this module;
// `@jest/globals` itself cannot be mocked). Without it, loading the suite is a FerryConfigError
// with the install line, as every optional peer of ferry's, not Node's raw MODULE_NOT_FOUND.
import type * as JestGlobals from '@jest/globals';
import { optionalPeerError } from '@ferry/core/transport';

const globals = ((): typeof JestGlobals => {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('@jest/globals') as typeof JestGlobals;
  } catch (error) {
    throw optionalPeerError(error, {
      peer: '@jest/globals',
      option: '@jest/globals',
      reason:
        'the transport conformance suite (@ferry/testing/conformance) registers jest tests and needs the optional peer dependency @jest/globals: npm install --save-dev @jest/globals',
    });
  }
})();

export const afterEach: typeof JestGlobals.afterEach = globals.afterEach;
export const beforeEach: typeof JestGlobals.beforeEach = globals.beforeEach;
export const describe: typeof JestGlobals.describe = globals.describe;
export const expect: typeof JestGlobals.expect = globals.expect;
export const it: typeof JestGlobals.it = globals.it;
