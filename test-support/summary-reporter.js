// Prints the closing line CI reads, `N passed, N failed` (`, N skipped` when any), computed from
// jest's aggregated results, and writes those results as JSON to .jest-results.json for anyone who
// wants more. A passing case titled `skipped: …` (the conformance suite's case for a feature a
// transport lacks, see @ferry/testing/conformance) counts as skipped, not passed.
const { writeFileSync } = require('node:fs');
const path = require('node:path');
const { takeCpuRecords } = require('./cpuRecords');

const SKIPPED_PREFIX = 'skipped: ';

function declaredSkipped(results) {
  let count = 0;
  for (const file of results.testResults) {
    for (const test of file.testResults) {
      if (test.status === 'passed' && test.title.startsWith(SKIPPED_PREFIX)) count += 1;
    }
  }
  return count;
}

// Every test file, slowest first, so a run's time can be read without re-running it (the whole
// `npm test` must stay well under 30 minutes), with the CPU seconds it cost its worker process and
// the children that process waited for (cpuEnvironment.js) where they were measured: the run is
// CPU-bound, so a file's share of the CPU, not its wall time, is what it adds to the run.
function slowestFiles(results, count, cpuByFile) {
  const root = path.join(__dirname, '..');
  return results.testResults
    .map((file) => {
      const cpu = cpuByFile.get(file.testFilePath);
      return {
        file: path.relative(root, file.testFilePath),
        seconds: Math.round((file.perfStats.end - file.perfStats.start) / 100) / 10,
        ...(cpu === undefined ? {} : { cpuSeconds: Math.round(cpu * 10) / 10 }),
      };
    })
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, count);
}

// Whether the run passed, as jest will decide it: jest calls onRunComplete before it sets
// `results.success` (false until then, @jest/core TestScheduler), so a green run read `false`.
// A reporter's own error, which jest also counts, cannot be seen from here.
function succeeded(results, failed) {
  return failed === 0 && !results.snapshot.failure && results.runExecError === undefined;
}

// What .jest-results.json holds for jest's aggregated results; `cpuByFile`: CPU seconds by test
// file path.
function summarize(results, cpuByFile = new Map()) {
  const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
  const declared = declaredSkipped(results);
  return {
    passed: results.numPassedTests - declared,
    failed,
    skipped: results.numPendingTests + results.numTodoTests + declared,
    suites: results.numTotalTestSuites,
    failedSuites: results.numFailedTestSuites,
    success: succeeded(results, failed),
    slowest: slowestFiles(results, results.testResults.length, cpuByFile),
  };
}

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const summary = summarize(results, takeCpuRecords(process.pid));
    writeFileSync(path.join(__dirname, '..', '.jest-results.json'), JSON.stringify(summary, null, 2));
    const listed = summary.slowest.slice(0, 10).map((f) => `  ${f.seconds} s  ${f.file}`);
    process.stdout.write(`\nslowest test files:\n${listed.join('\n')}\n`);
    const measured = summary.slowest.filter((f) => f.cpuSeconds !== undefined);
    if (measured.length > 0) {
      const total = measured.reduce((sum, f) => sum + f.cpuSeconds, 0);
      const costliest = [...measured]
        .sort((a, b) => b.cpuSeconds - a.cpuSeconds)
        .slice(0, 10)
        .map((f) => `  ${f.cpuSeconds} s  ${f.file}`);
      process.stdout.write(
        `\ntest files costing the most CPU (their workers and children; ${Math.round(total)} s in all):\n${costliest.join('\n')}\n`,
      );
    }
    const skipped = summary.skipped > 0 ? `, ${summary.skipped} skipped` : '';
    process.stdout.write(`\n${summary.passed} passed, ${summary.failed} failed${skipped}\n`);
  }
}

module.exports = SummaryReporter;
module.exports.summarize = summarize;
