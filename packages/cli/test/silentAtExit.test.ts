/**
 * A server that goes silent after the command answered (packets dropped from the moment the CLI
 * says goodbye, a network blackhole) must not hold the process at exit: ending its idle
 * connection waits for the server's end of the socket, which never comes. The real binary ends
 * anyway, with the exit code of the answer it already printed.
 */
import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { halfOpenProxy, type HalfOpenProxy } from '../../../test-support/halfOpenProxy';
import { runBinary } from './binary';

jest.setTimeout(60_000);

/**
 * Generous: the CLI's own wait at exit is far shorter, and a process held by the silent socket
 * never ends at all. 8 s was not enough for a whole start, query and exit at load 30 (both cases
 * killed as hung while the CLI was still starting).
 */
const EXIT_BOUND_MS = 25_000;

/** PostgreSQL's Terminate message ('X', length 4): the client's goodbye, sent when it ends a connection. */
const TERMINATE = 'X\u0000\u0000\u0000\u0004';

let t: TestDatabase;
let proxy: HalfOpenProxy;

beforeAll(async () => {
  t = await createTestDatabase();
});
beforeEach(async () => {
  proxy = await halfOpenProxy(new URL(t.url));
  proxy.silenceOn(TERMINATE);
});
afterEach(() => proxy.close());
afterAll(async () => {
  await t.drop();
});

describe('a server that goes silent once the command answered', () => {
  it('outbox stats prints its counts and exits 0', async () => {
    const run = runBinary(['outbox', 'stats', '--database-url', proxy.url(t.url)]);
    const ended = await run.ended(EXIT_BOUND_MS);
    expect(run.stdout()).toContain('total 0');
    expect(ended).toEqual({ code: 0, signal: null, hung: false });
  });

  it('outbox show of an unknown id prints FERRY_NOT_FOUND and exits 1', async () => {
    const run = runBinary(['outbox', 'show', randomUUID(), '--database-url', proxy.url(t.url)]);
    const ended = await run.ended(EXIT_BOUND_MS);
    expect(run.stderr()[0]).toMatch(/^ferry outbox show: FERRY_NOT_FOUND: /);
    expect(ended).toEqual({ code: 1, signal: null, hung: false });
  });
});
