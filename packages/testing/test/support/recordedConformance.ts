import { runTransportConformance, type TransportConformanceOptions } from '@ferry/testing/conformance';

/**
 * Runs the conformance suite case by case inside one jest test (review25/28-conformance-mutants):
 * a test file mocks the suite's jest functions with `recordingJest()`,
 *
 *   jest.mock('../src/conformance/jest', () =>
 *     jest.requireActual<typeof import('./support/recordedConformance')>('./support/recordedConformance').recordingJest(),
 *   );
 *
 * and `conformanceFailures(options)` registers the suite, runs each recorded case with its
 * beforeEach / afterEach, and names the failed ones.
 */
type Fn = () => unknown;
interface Recorded {
  cases: { name: string; fn: Fn }[];
  before: Fn[];
  after: Fn[];
}
let target: Recorded | null = null;

/** The suite's jest functions, recording into the run of conformanceFailures in progress. */
export function recordingJest(): Record<string, unknown> {
  const actual = jest.requireActual<typeof import('../../src/conformance/jest')>(
    '../../src/conformance/jest',
  );
  return {
    expect: actual.expect,
    describe: (_name: string, body: () => void) => body(),
    it: (name: string, fn: Fn) => target?.cases.push({ name, fn }),
    beforeEach: (fn: Fn) => target?.before.push(fn),
    afterEach: (fn: Fn) => target?.after.push(fn),
  };
}

function within<T>(ms: number, what: string, run: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    run().finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    }),
  ]);
}

/**
 * Runs every case the suite registers for `options`; the names of the failed ones, with why.
 * `untilFirst`: stops after the first failed case (with its afterEach), for a test asking only
 * whether the suite fails at all: the cases after it would only wait out their timeouts.
 */
export async function conformanceFailures(
  options: TransportConformanceOptions,
  { untilFirst = false }: { untilFirst?: boolean } = {},
): Promise<string[]> {
  const recorded: Recorded = { cases: [], before: [], after: [] };
  target = recorded;
  try {
    runTransportConformance(options);
  } finally {
    target = null;
  }
  expect(recorded.cases.length).toBeGreaterThanOrEqual(15);
  const limit = 3 * (options.timeoutMs ?? 30_000);
  const failed: string[] = [];
  for (const { name, fn } of recorded.cases) {
    let error: unknown = null;
    try {
      for (const hook of recorded.before) await within(limit, 'beforeEach', async () => hook());
      await within(limit, name, async () => fn());
    } catch (thrown) {
      error = thrown;
    }
    try {
      for (const hook of recorded.after) await within(limit, 'afterEach', async () => hook());
    } catch (thrown) {
      error ??= thrown;
    }
    if (error !== null) failed.push(`${name}: ${String(error).split('\n')[0]}`);
    if (untilFirst && failed.length > 0) break;
  }
  return failed;
}
