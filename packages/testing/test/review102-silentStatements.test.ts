/**
 * Review 102: recreateDatabase and dropDatabase against a server that goes silent between the
 * connect and the answer to one of their statements (a network blackhole, a server hung on a
 * lock-free wait): every wait of @ferry/testing has a deadline, so the call fails with an error
 * instead of waiting for ever, and leaves no connection to the server. (silentServer.test.ts
 * covers a server silent from the start and one silent at the connection's end.)
 */
import { dropDatabase, recreateDatabase } from '../src';
import { halfOpenProxy } from '../../../test-support/halfOpenProxy';
import { scratchDatabaseUrl } from '../../../test-support/database';
import { outcomeWithin } from '../../../test-support/deadlines';
import { openSocketsTo } from '../../../test-support/openSockets';

jest.setTimeout(90_000);

/** Far past any deadline of the helpers: a call still waiting then waits for ever. */
const HANG_MS = 45_000;

const cases: [string, string, (url: string) => Promise<void>][] = [
  ['dropDatabase', 'pg_stat_activity', (url) => dropDatabase(url)],
  ['recreateDatabase', 'CREATE DATABASE', (url) => recreateDatabase(url)],
];

for (const [name, marker, call] of cases) {
  test(`${name} fails, not hangs, when the server goes silent at its statement (${marker}), and leaves no connection`, async () => {
    const real = scratchDatabaseUrl(`ferry_r102_${name.toLowerCase()}`);
    const proxy = await halfOpenProxy(new URL(real));
    try {
      proxy.silenceOn(marker);
      const outcome = await outcomeWithin(call(proxy.url(real)), HANG_MS);
      // A FerryError like every other failure of the helpers (review 109: a plain Error came out).
      expect(outcome).toEqual({
        error: expect.objectContaining({ code: 'FERRY_TIMEOUT', retriable: true }),
      });
      const port = Number(new URL(proxy.url(real)).port);
      expect(openSocketsTo(port)).toBe(0);
    } finally {
      proxy.close();
      await dropDatabase(real);
    }
  });
}
