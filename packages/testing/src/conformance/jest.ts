// The jest functions the suite registers its cases with: the one import of `@jest/globals` (an
// optional peer), so a test can record what the suite registers (jest.doMock of this module;
// `@jest/globals` itself cannot be mocked).
export { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
