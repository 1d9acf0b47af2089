/**
 * Review 90, failing test: `npm run test:<suite> -- <scenario>` refuses the scenario's file path.
 *
 * What I did: `npm run test:broker-recovery -- fault-tests/broker-recovery/kafka-outage.test.ts`,
 * the path a shell completes (and the one jest prints beside a failed file), here on the harness
 * folder with `--listTests`.
 * What happened: the path was taken as a name inside the suite's folder
 * (`fault-tests/harness/(fault-tests/harness/ports)\.test\.ts$`), so it matched no file: nothing
 * listed, and a real run fails with "No tests found".
 * What should happen: a path to a file of the suite selects that file (its name without
 * `.test.ts`, as the README's scenario names); a name of another suite's file still selects none.
 */
import { REPO_ROOT } from './brokers';
import { listedFiles } from './faultSuite';

jest.setTimeout(120_000);

it.each([
  'fault-tests/harness/ports.test.ts',
  './fault-tests/harness/ports.test.ts',
  `${REPO_ROOT}/fault-tests/harness/ports.test.ts`,
])('the scenario given as its file path (%s) selects its file', async (file) => {
  expect(await listedFiles([file])).toEqual(['fault-tests/harness/ports.test.ts']);
});

it("a path to another suite's file selects nothing of this suite", async () => {
  expect(await listedFiles(['fault-tests/operations/ports.test.ts'])).toEqual([]);
});
