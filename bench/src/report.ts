import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PRISMA_LABEL, SENT } from './env';
import { EXECUTOR } from './outbox';
import {
  format,
  runScenario,
  type BenchOptions,
  type BenchReport,
  type Scenario,
  type ScenarioResult,
} from './runner';

/** Runs every scenario in order; a scenario that throws is recorded in `errors` and the rest still run. */
export async function runBench(scenarios: readonly Scenario[], options: BenchOptions): Promise<BenchReport> {
  const startedAt = new Date().toISOString();
  const results: ScenarioResult[] = [];
  const errors: { name: string; error: string }[] = [];
  const log = options.log ?? (() => undefined);
  for (const scenario of scenarios) {
    log(`${scenario.name}: ${scenario.subjectLabel} vs ${scenario.baselineLabel}`);
    try {
      results.push(await runScenario(scenario, options));
    } catch (error) {
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      log(`${scenario.name} FAILED: ${message}`);
      errors.push({ name: scenario.name, error: message });
    }
  }
  const cpus = os.cpus();
  return {
    startedAt,
    finishedAt: new Date().toISOString(),
    machine: {
      cpus: cpus.length,
      cpuModel: cpus[0]?.model ?? 'unknown',
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
    },
    options: {
      n: options.n,
      rounds: options.rounds,
      statements: EXECUTOR === 'pg' ? 'node-postgres' : PRISMA_LABEL,
      onSent: SENT,
    },
    results,
    errors,
  };
}

function extras(result: ScenarioResult): string {
  return Object.keys(result.subject.extra)
    .map(
      (name) =>
        `${name} ${format(result.baseline.extra[name] ?? NaN)} / ${format(result.subject.extra[name] ?? NaN)} ` +
        `(x${format(result.extraRatios[name] ?? NaN)})`,
    )
    .join('; ');
}

/** The scenario's targets, e.g. `ratio >= 0.5 met; subject >= 15000 MISSED`. */
function targets(result: ScenarioResult): string {
  const sign = result.better === 'higher' ? '>=' : '<=';
  return result.targets
    .map((t) => `${t.on} ${sign} ${format(t.bound)} ${t.met ? 'met' : 'MISSED'}`)
    .join('; ');
}

/** A fixed-width table: one line per scenario, medians of both sides, their ratio and targets. */
export function formatTable(report: BenchReport): string {
  const header = ['scenario', 'n', 'unit', 'baseline', 'subject', 'ratio', 'ok', 'targets', 'notes'];
  const rows = report.results.map((result) => [
    result.name,
    String(result.n),
    result.unit,
    format(result.baseline.median),
    format(result.subject.median),
    `x${format(result.ratio)}`,
    result.verified ? 'yes' : 'NO',
    targets(result),
    extras(result),
  ]);
  for (const failure of report.errors) rows.push([failure.name, '-', '-', '-', '-', '-', 'ERROR', '', '']);
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i >= 3 && i <= 5 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** Writes the report as `<dir>/<timestamp>.json` and returns the path. */
export function writeReport(report: BenchReport, dir: string): string {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${report.startedAt.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}
