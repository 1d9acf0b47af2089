// Prints the closing line CI reads, `N passed, N failed`, computed from jest's aggregated
// results, and writes those results as JSON to .jest-results.json for anyone who wants more.
const { writeFileSync } = require('node:fs');
const path = require('node:path');

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const summary = {
      passed: results.numPassedTests,
      failed,
      skipped: results.numPendingTests + results.numTodoTests,
      suites: results.numTotalTestSuites,
      failedSuites: results.numFailedTestSuites,
      success: results.success,
    };
    writeFileSync(path.join(__dirname, '..', '.jest-results.json'), JSON.stringify(summary, null, 2));
    process.stdout.write(`\n${summary.passed} passed, ${summary.failed} failed\n`);
  }
}

module.exports = SummaryReporter;
