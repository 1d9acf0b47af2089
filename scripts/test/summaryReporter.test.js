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
