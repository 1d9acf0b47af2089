// test-support/summary-reporter.js, driven with jest's aggregated result as its reporters receive
// it (pure logic: no run, no file written). Jest calls onRunComplete before it sets `success` on
// that result (@jest/core TestScheduler: it is `false` until every reporter has returned), so the
// reporter must work the outcome out itself.
const { makeEmptyAggregatedTestResult } = require('@jest/test-result');
const SummaryReporter = require('../../test-support/summary-reporter');

/** The aggregated result of a finished run as onRunComplete sees it: `success` not set yet. */
function finishedRun(overrides = {}) {
  return { ...makeEmptyAggregatedTestResult(), success: false, numTotalTestSuites: 1, ...overrides };
}

function fileResult(tests) {
  return {
    testFilePath: '/repo/packages/core/test/x.test.ts',
    perfStats: { start: 0, end: 1500 },
    testResults: tests.map(([title, status]) => ({ title, status })),
  };
}

describe('summary-reporter', () => {
  it('reports a green run as a success (jest has not set `success` yet)', () => {
    const results = finishedRun({
      numPassedTests: 3,
      numTotalTests: 3,
      numPassedTestSuites: 1,
      testResults: [
        fileResult([
          ['a', 'passed'],
          ['b', 'passed'],
          ['skipped: no ordering', 'passed'],
        ]),
      ],
    });
    expect(SummaryReporter.summarize(results)).toMatchObject({
      passed: 2,
      failed: 0,
      skipped: 1,
      suites: 1,
      failedSuites: 0,
      success: true,
      slowest: [{ file: expect.stringContaining('x.test.ts'), seconds: 1.5 }],
    });
  });

  it.each([
    ['a failed test', { numFailedTests: 1, numFailedTestSuites: 1 }],
    ['a suite that could not run', { numRuntimeErrorTestSuites: 1, numFailedTestSuites: 1 }],
    ['a snapshot failure', { snapshot: { ...makeEmptyAggregatedTestResult().snapshot, failure: true } }],
    ['an error that ended the run', { runExecError: { message: 'worker crashed', stack: '' } }],
  ])('reports a run with %s as no success', (_name, overrides) => {
    expect(SummaryReporter.summarize(finishedRun(overrides)).success).toBe(false);
  });
});

describe('the CPU time of each test file (cpuEnvironment.js, cpuRecords.js)', () => {
  const { cpuRecordFile, processCpuSeconds, takeCpuRecords } = require('../../test-support/cpuRecords');
  const { appendFileSync, existsSync, mkdirSync } = require('node:fs');
  const path = require('node:path');

  it('lists a file with the CPU seconds measured for it, and one not measured without', () => {
    const results = finishedRun({
      numPassedTests: 2,
      numTotalTests: 2,
      testResults: [
        { ...fileResult([['a', 'passed']]), testFilePath: '/repo/a.test.ts' },
        { ...fileResult([['b', 'passed']]), testFilePath: '/repo/b.test.ts' },
      ],
    });
    const { slowest } = SummaryReporter.summarize(results, new Map([['/repo/a.test.ts', 2.46]]));
    expect(slowest.find((f) => f.file.endsWith('a.test.ts'))).toMatchObject({ cpuSeconds: 2.5 });
    expect(slowest.find((f) => f.file.endsWith('b.test.ts'))).not.toHaveProperty('cpuSeconds');
  });

  it('reads back what the run wrote, skips a line cut short, and removes the file', () => {
    // A run id no jest process has: this test's own pid, negated.
    const run = -process.pid;
    const file = cpuRecordFile(run);
    mkdirSync(path.dirname(file), { recursive: true });
    appendFileSync(
      file,
      `${JSON.stringify({ file: '/repo/a.test.ts', cpuSeconds: 1.25 })}\n{"file":"/repo/b.te`,
    );
    expect([...takeCpuRecords(run)]).toEqual([['/repo/a.test.ts', 1.25]]);
    expect(existsSync(file)).toBe(false);
    expect(takeCpuRecords(run).size).toBe(0);
  });

  it("counts this process's CPU time as it grows", () => {
    const before = processCpuSeconds();
    const until = Date.now() + 300;
    while (Date.now() < until) Math.sqrt(Math.random());
    expect(processCpuSeconds()).toBeGreaterThan(before);
  });
});
