// jest's node environment, which also measures the CPU time each test file costs its worker
// process: the worker's own time and that of the child processes it waited for (brokers' CLIs, the
// CLI under test, npm and tsc in the packaging suites). The whole run is CPU-bound on a 2-core
// machine, so a file's wall time mostly says how busy the others were; its CPU time says what it
// costs the run. Each file appends one line to a file the summary reporter reads (cpuRecords.js).
// Not counted: the PostgreSQL, broker and service processes the file kept busy.
const { TestEnvironment } = require('jest-environment-node');
const { appendFileSync, mkdirSync } = require('node:fs');
const { cpuRecordFile, processCpuSeconds } = require('./cpuRecords');

class CpuMeasuringEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
  }

  async setup() {
    this.cpuAtStart = processCpuSeconds();
    await super.setup();
  }

  async teardown() {
    await super.teardown();
    if (this.cpuAtStart === undefined) return;
    const seconds = processCpuSeconds() - this.cpuAtStart;
    // A worker is a child process of the jest run (IPC channel), so the run is its parent;
    // in a single-process run (--runInBand) the run is this process.
    const run = typeof process.send === 'function' ? process.ppid : process.pid;
    try {
      const file = cpuRecordFile(run);
      mkdirSync(require('node:path').dirname(file), { recursive: true });
      appendFileSync(file, `${JSON.stringify({ file: this.testPath, cpuSeconds: seconds })}\n`);
    } catch {
      // A measurement only: a file that cannot be written never fails the test file.
    }
  }
}

module.exports = CpuMeasuringEnvironment;
