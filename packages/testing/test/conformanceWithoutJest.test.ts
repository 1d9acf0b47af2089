/**
 * `@ferry/testing/conformance` registers jest tests through `@jest/globals`, an optional peer:
 * without it, loading the entry point is a FerryConfigError with the install line, as every other
 * optional peer of ferry's (Kysely, @platformatic/kafka), not Node's raw MODULE_NOT_FOUND. Run
 * in a child Node process on the built package, `@jest/globals` made unresolvable there.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const ENTRY = path.resolve(__dirname, '../dist/conformance/index.js');

/** A preload that makes `@jest/globals` unresolvable, as in an application that did not install it. */
const HIDE_JEST_GLOBALS = `
const Module = require('node:module');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === '@jest/globals') {
    const error = new Error("Cannot find module '@jest/globals'");
    error.code = 'MODULE_NOT_FOUND';
    throw error;
  }
  return resolve.call(this, request, ...rest);
};`;

const LOAD = `
try {
  require(${JSON.stringify(ENTRY)});
  console.log(JSON.stringify({ loaded: true }));
} catch (error) {
  console.log(JSON.stringify({ name: error.name, code: error.code, option: error.option, message: error.message }));
}`;

it('without @jest/globals, loading @ferry/testing/conformance is FERRY_CONFIG_INVALID saying what to install', () => {
  const out = execFileSync(process.execPath, ['-e', `${HIDE_JEST_GLOBALS}\n${LOAD}`], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  const answer = JSON.parse(out.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;
  expect(answer).toMatchObject({
    code: 'FERRY_CONFIG_INVALID',
    message: expect.stringContaining('npm install --save-dev @jest/globals'),
  });
});
