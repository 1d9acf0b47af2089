/**
 * `ferry top` runs for hours. Each refresh's pause added a listener to the stop signal and never
 * removed it: after 10 refreshes Node warned of a possible memory leak (MaxListenersExceededWarning)
 * on the operator's terminal, and every refresh kept one more closure alive.
 */
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { runBinary } from './binary';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it('refreshing many times neither warns of a listener leak nor keeps a listener per refresh', async () => {
  const run = runBinary(['top', '--iterations', '15', '--interval', '1ms', '--database-url', t.url]);
  const ended = await run.ended(60_000);
  expect(ended).toMatchObject({ code: 0, hung: false });
  expect(run.stdout().length).toBeGreaterThanOrEqual(15);
  expect(run.stderr().filter((line) => /MaxListenersExceeded|memory leak/i.test(line))).toEqual([]);
});
