import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderChart } from './chart';
import type { BenchReport } from './runner';

const RESULTS = path.join(__dirname, '..', 'results');
const COMMITTED = path.join(__dirname, '..', '..', 'docs', 'bench-chart.svg');

/** The newest `<timestamp>.json` report in `dir` (timestamps sort as text). */
export function latestReport(dir: string): string {
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort();
  const last = files.at(-1);
  if (last === undefined) throw new Error(`no bench report (*.json) in ${dir}: run npm run bench first`);
  return path.join(dir, last);
}

/**
 * `npm run bench:chart [report.json] [out.svg]`: renders a report (default: the newest in
 * bench/results) to docs/bench-chart.svg, the chart the root README shows.
 */
export function chartMain(args: readonly string[]): number {
  // Paths given are read from where npm was run (the root, for `npm run bench:chart`), not bench/.
  const given = (arg: string | undefined) =>
    arg === undefined ? undefined : path.resolve(process.env.INIT_CWD ?? process.cwd(), arg);
  const source = given(args[0]) ?? latestReport(process.env.BENCH_RESULTS_DIR ?? RESULTS);
  const target = given(args[1]) ?? COMMITTED;
  const report = JSON.parse(readFileSync(source, 'utf8')) as BenchReport;
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, renderChart(report));
  process.stdout.write(`chart: ${target} (from ${source})\n`);
  return 0;
}
