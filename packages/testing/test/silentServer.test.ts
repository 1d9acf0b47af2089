/**
 * recreateDatabase and dropDatabase against a server that goes silent: every connection they make
 * connects and ends within a deadline. A server that accepts and never answers fails the connect
 * (10 s) with an error naming it; a server that answered and went silent before the connection's
 * end (its Terminate never answered, no FIN) no longer holds the call and the process: the socket
 * is destroyed after CONNECTION_END_WAIT_MS.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { dropDatabase, recreateDatabase } from '../src';
import {
  commitSwallowingProxy,
  type CommitSwallowingProxy,
} from '../../../test-support/commitSwallowingProxy';
import { scratchDatabaseUrl, serverUrl } from '../../../test-support/database';
import { outcomeWithin } from '../../../test-support/deadlines';
import { openSocketsTo } from '../../../test-support/openSockets';

/** Past the 10 s connect deadline and the 1 s end deadline: a call still waiting then hangs. */
const HANG_MS = 20_000;

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
});

/** A TCP server that accepts every connection and never writes a byte. */
async function silentServer(): Promise<{ port: number; close(): void }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

it('recreateDatabase fails within the connect deadline when the database is on a server that never answers', async () => {
  const silent = await silentServer();
  cleanups.push(() => silent.close());
  const url = new URL(scratchDatabaseUrl('ferry_silent_db'));
  url.port = String(silent.port);
  // Its server never answers (a `through` on another server, one that answers, is refused since
  // review 77): the connection that drops and creates it fails within the connect deadline.
  const real = new URL(url);
  real.port = new URL(serverUrl()).port || '5432';
  cleanups.push(() => dropDatabase(real.toString()));
  const outcome = await outcomeWithin(recreateDatabase(url.toString()), HANG_MS);
  expect(outcome).not.toBe('hung');
  expect((outcome as { error?: unknown }).error).toBeInstanceOf(Error);
  expect(openSocketsTo(silent.port)).toBe(0);
}, 60_000);

it('recreateDatabase and dropDatabase end their connections although the server went silent at their end', async () => {
  const proxy: CommitSwallowingProxy = await commitSwallowingProxy();
  cleanups.push(() => proxy.close());
  const real = scratchDatabaseUrl('ferry_silent_end');
  cleanups.push(() => dropDatabase(real));
  const url = proxy.url(real);
  proxy.silenceEnds();
  expect(await outcomeWithin(recreateDatabase(url), HANG_MS)).toEqual({ value: undefined });
  expect(await outcomeWithin(dropDatabase(url), HANG_MS)).toEqual({ value: undefined });
  expect(openSocketsTo(proxy.port)).toBe(0);
}, 60_000);
