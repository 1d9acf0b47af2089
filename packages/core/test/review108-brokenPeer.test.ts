/**
 * Review 108: an optional peer dependency that is installed but fails to load.
 *
 * What I did: installed prom-client (and kysely, @jest/globals, @platformatic/kafka) with one of
 * its own dependencies missing, as a pruned or partly copied node_modules leaves it, and imported
 * the entry point that needs it. What happened: Node's error is MODULE_NOT_FOUND for the
 * dependency (`Cannot find module 'tdigest'`), and ferry answered that the peer itself is not
 * installed, telling the operator to `npm install prom-client`, which they had. What should
 * happen: only a peer that cannot be found itself is "not installed"; any other load failure is
 * the peer's own error, as @ferry/testing says of testcontainers (review 44).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { optionalPeerError } from '@ferry/core/transport';

const root = mkdtempSync(path.join(tmpdir(), 'ferry-review108-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A package `name` under the fixture's node_modules whose main requires `dependency` (absent). */
function brokenPackage(name: string, dependency: string): void {
  const dir = path.join(root, 'node_modules', name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', main: 'index.js' }));
  writeFileSync(path.join(dir, 'index.js'), `module.exports = require(${JSON.stringify(dependency)});\n`);
}

/**
 * What Node throws loading `name` from the fixture, with its code and message: loaded by node
 * itself (jest's own require says `Cannot find module '<name>'` for any unresolved package).
 */
function loadError(name: string): Error {
  const program = `try { require(${JSON.stringify(name)}); console.log('{}'); } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }`;
  const { code, message } = JSON.parse(
    execFileSync(process.execPath, ['-e', program], { cwd: root, encoding: 'utf8' }),
  ) as {
    code?: string;
    message?: string;
  };
  if (message === undefined) throw new Error(`${name} loaded`);
  return Object.assign(new Error(message), { code });
}

describe('review108: an optional peer installed but failing to load', () => {
  test('a dependency of the peer missing: the peer’s own error, not “not installed”', () => {
    brokenPackage('prom-client', 'tdigest');
    const error = loadError('prom-client');
    expect(error).toMatchObject({ code: 'MODULE_NOT_FOUND' });
    expect(
      optionalPeerError(error, { peer: 'prom-client', option: '@ferry/core/metrics', reason: 'x' }),
    ).toBe(error);
  });

  test('a scoped peer whose main file is missing (a broken install): its own error', () => {
    const dir = path.join(root, 'node_modules', '@fixture', 'peer');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: '@fixture/peer', main: 'gone.js' }));
    const error = loadError('@fixture/peer');
    expect(error).toMatchObject({ code: 'MODULE_NOT_FOUND' });
    expect(optionalPeerError(error, { peer: '@fixture/peer', option: 'client', reason: 'x' })).toBe(error);
  });

  test('the peer itself absent: FerryConfigError on the option with the reason', () => {
    const error = loadError('kysely');
    expect(error).toMatchObject({ code: 'MODULE_NOT_FOUND' });
    expect(
      optionalPeerError(error, {
        peer: 'kysely',
        option: '@ferry/core/kysely',
        reason: 'npm install kysely',
      }),
    ).toMatchObject({
      code: 'FERRY_CONFIG_INVALID',
      option: '@ferry/core/kysely',
      message: expect.stringContaining('npm install kysely'),
    });
  });

  test('importing @ferry/core/metrics with prom-client’s dependency missing rethrows that error', () => {
    brokenPackage('prom-client', 'tdigest');
    const error = loadError('prom-client');
    jest.isolateModules(() => {
      jest.doMock('prom-client', () => {
        throw error;
      });
      let thrown: unknown;
      try {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        require('@ferry/core/metrics');
      } catch (caught) {
        thrown = caught;
      }
      expect(thrown).toBe(error);
      expect(String((thrown as Error).message)).toContain("'tdigest'");
    });
  });
});
