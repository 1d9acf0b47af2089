import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderChart } from './chart';
import { positiveInteger } from './env';
import { formatTable, runBench, writeReport } from './report';
import { allScenarios } from './scenarios';

/**
 * `npm run bench`. BENCH_N (default 2000) messages per round, BENCH_ROUNDS (default 3) rounds,
 * BENCH_ONLY (comma-separated scenario names) to run a subset, BENCH_LATENCY_N (default 100)
 * events per latency round. Prints the table and writes bench/results/<timestamp>.json and
 * bench/results/chart.svg (the same run as a chart; `npm run bench:chart` renders a report to
 * docs/bench-chart.svg).
 */
export async function main(): Promise<number> {
  const only = (process.env.BENCH_ONLY ?? '').split(',').filter((name) => name.length > 0);
  const scenarios = allScenarios().filter((scenario) => only.length === 0 || only.includes(scenario.name));
  const report = await runBench(scenarios, {
    n: positiveInteger('BENCH_N', 2000),
    rounds: positiveInteger('BENCH_ROUNDS', 3),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(`\n${formatTable(report)}\n`);
  const dir = process.env.BENCH_RESULTS_DIR ?? path.join(__dirname, '..', 'results');
  const file = writeReport(report, dir);
  const chart = path.join(dir, 'chart.svg');
  writeFileSync(chart, renderChart(report));
  process.stdout.write(`\nresults: ${file}\nchart: ${chart}\n`);
  const failed = report.errors.length > 0 || report.results.some((result) => !result.verified);
  return failed ? 1 : 0;
}
