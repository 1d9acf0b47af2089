/**
 * Review 44, failing test: a testcontainers that is installed but cannot load is reported as "not
 * installed".
 *
 * What I did: in an application on Node 20 (ferry's floor, engines >=20.19) I ran the README's
 * `npm install --save-dev testcontainers` (the optional peer, range `>=10`): npm picked 12.0.4,
 * whose undici calls `zlib.createZstdDecompress` (Node 22), so `require('testcontainers')` throws
 * `TypeError: Cannot read properties of undefined (reading 'bind')`. Then
 * `startFerryServices({ mode: 'testcontainers' })` with a reachable Docker engine.
 * What happened: `FERRY_CONFIG_INVALID: 'testcontainers' was requested but the testcontainers
 * package is not installed`: loadTestcontainers() (src/services/containers.ts) catches every
 * error of the require as "absent", so the operator is told to install a package that is
 * installed, and the reason it failed is lost (mode 'auto' silently runs the native services).
 * What should happen: only a missing package (MODULE_NOT_FOUND for `testcontainers` itself) reads
 * as not installed; a package that fails to load is named with its load error.
 * Fix direction: rethrow (or carry as the cause, in the message) any error other than
 * MODULE_NOT_FOUND of `testcontainers`, as core's requireOptionalPeer does.
 */
import { createServer, type Server } from 'node:net';

/** The error testcontainers 12 throws at require on Node 20. */
const LOAD_ERROR = "Cannot read properties of undefined (reading 'bind')";

describe('review44: startFerryServices with a testcontainers that does not load', () => {
  let docker: Server;
  const saved = process.env.DOCKER_HOST;

  beforeAll(async () => {
    // Something accepting connections where DOCKER_HOST points: a reachable Docker engine.
    docker = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => docker.listen(0, '127.0.0.1', resolve));
    const address = docker.address();
    process.env.DOCKER_HOST = `tcp://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    jest.doMock(
      'testcontainers',
      () => {
        throw new TypeError(LOAD_ERROR);
      },
      { virtual: true },
    );
  });

  afterAll(async () => {
    if (saved === undefined) delete process.env.DOCKER_HOST;
    else process.env.DOCKER_HOST = saved;
    await new Promise((resolve) => docker.close(resolve));
  });

  it("names the load failure instead of saying the package is not installed (mode 'testcontainers')", async () => {
    // The package is there, and fails to load (as testcontainers 12 on Node 20).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    expect(() => require('testcontainers')).toThrow(LOAD_ERROR);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { startFerryServices } = require('@ferry/testing') as typeof import('@ferry/testing');
    const error = await startFerryServices({ mode: 'testcontainers', services: ['postgres'] }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error?.message).not.toContain('not installed');
    expect(`${error?.message} ${String((error as { cause?: unknown } | undefined)?.cause)}`).toContain(
      LOAD_ERROR,
    );
  });
});
