// Where each test file's CPU time is written (cpuEnvironment.js) and read back (the summary
// reporter), and how a process's CPU time is read.
const { readFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const path = require('node:path');

/** The file a jest run's (`run`: its main process id) measurements are appended to. */
function cpuRecordFile(run) {
  return path.join(tmpdir(), 'ferry-test-cpu', `${run}.jsonl`);
}

// Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on every Linux jest runs on here).
const TICKS_PER_SECOND = 100;

/**
 * CPU seconds of this process and of the children it waited for (Linux: /proc/self/stat utime,
 * stime, cutime, cstime); elsewhere the process's own time only.
 */
function processCpuSeconds() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
    return ticks / TICKS_PER_SECOND;
  } catch {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1e6;
  }
}

/** The run's measurements, by test file path (the file is removed once read); empty when none. */
function takeCpuRecords(run) {
  const file = cpuRecordFile(run);
  const byFile = new Map();
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return byFile;
  }
  rmSync(file, { force: true });
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const { file: testPath, cpuSeconds } = JSON.parse(line);
      if (typeof testPath === 'string' && Number.isFinite(cpuSeconds)) byFile.set(testPath, cpuSeconds);
    } catch {
      // A line cut short by a worker killed while writing: skipped.
    }
  }
  return byFile;
}

module.exports = { cpuRecordFile, processCpuSeconds, takeCpuRecords };
