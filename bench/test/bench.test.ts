/**
 * The benchmark runner in a tiny mode (20 messages, one round, no warm-up) on three scenarios:
 * checks the report's shape and that every run did its work (every event SENT, every receipt
 * completed). It asserts no timing: on a shared 2-core machine any threshold would be flaky.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { formatTable, runBench, writeReport } from '../src/report';
import type { BenchReport } from '../src/runner';
import { relayRabbitmq, relayScaling, workerCompletions } from '../src/scenarios';

jest.setTimeout(120_000);

describe('bench runner (tiny mode)', () => {
  let report: BenchReport;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'ferry-bench-'));
    report = await runBench([relayRabbitmq, workerCompletions, relayScaling(2)], {
      n: 20,
      rounds: 1,
      warmup: false,
    });
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs every scenario without an error', () => {
    expect(report.errors).toEqual([]);
    expect(report.results.map((result) => result.name)).toEqual([
      'relay-rabbitmq',
      'worker-completions',
      'relay-scaling-x2',
    ]);
  });

  it('verifies every run: all events SENT, all receipts completed, all deliveries acked', () => {
    for (const result of report.results) {
      expect({ name: result.name, verified: result.verified }).toEqual({ name: result.name, verified: true });
      for (const sample of [...result.baseline.samples, ...result.subject.samples]) {
        expect(sample.verified).toBe(true);
        expect(sample.ops).toBe(20);
      }
    }
  });

  it('reports one sample per round per side and a finite positive ratio', () => {
    for (const result of report.results) {
      expect(result.n).toBe(20);
      expect(result.baseline.samples).toHaveLength(1);
      expect(result.subject.samples).toHaveLength(1);
      for (const value of [result.baseline.median, result.subject.median, result.ratio]) {
        expect(Number.isFinite(value)).toBe(true);
        expect(value).toBeGreaterThan(0);
      }
      expect(result.ratio).toBeCloseTo(result.subject.median / result.baseline.median, 10);
    }
  });

  it('prints a table with one line per scenario', () => {
    const lines = formatTable(report).split('\n');
    expect(lines[0]).toMatch(/^scenario\s+n\s+unit\s+baseline\s+subject\s+ratio/);
    expect(lines).toHaveLength(2 + report.results.length);
    for (const result of report.results)
      expect(lines.some((line) => line.startsWith(result.name))).toBe(true);
  });

  it('writes the report as JSON', () => {
    const file = writeReport(report, dir);
    expect(existsSync(file)).toBe(true);
    const written = JSON.parse(readFileSync(file, 'utf8')) as BenchReport;
    expect(written.options).toEqual({ n: 20, rounds: 1 });
    expect(written.machine.cpus).toBeGreaterThan(0);
    expect(written.results.map((result) => result.name)).toEqual(report.results.map((result) => result.name));
  });
});
