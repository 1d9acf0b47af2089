/**
 * The benchmark runner in a tiny mode (20 messages, one round, no warm-up) on ten scenarios:
 * checks the report's shape, that every run did its work (every event SENT, every receipt
 * completed, every peer message processed, every end-to-end probe read once from Kafka) and the chart drawn from it. It asserts no timing:
 * on a shared 2-core machine any threshold would be flaky.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { renderChart } from '../src/chart';
import { latestReport } from '../src/chartMain';
import { formatTable, runBench, writeReport } from '../src/report';
import { postgresCpuMsBetween } from '../src/pgCpu';
import { checkTargets, format, type BenchReport } from '../src/runner';
import {
  e2eLatencyBrokers,
  relayKafkaCeiling,
  relayKafkaLockShape,
  relayKafkaPlatformatic,
  relayRabbitmq,
  relayRabbitmqPeer,
  relayScaling,
  workerCommitShape,
  workerCompletions,
  workerCompletionsPg,
} from '../src/scenarios';

jest.setTimeout(120_000);

describe('bench runner (tiny mode)', () => {
  let report: BenchReport;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'ferry-bench-'));
    const scenarios = [
      relayRabbitmq,
      relayRabbitmqPeer,
      relayKafkaPlatformatic,
      relayKafkaCeiling,
      relayKafkaLockShape,
      workerCompletions,
      workerCompletionsPg,
      workerCommitShape,
      relayScaling(2),
      e2eLatencyBrokers,
    ];
    report = await runBench(scenarios, { n: 20, rounds: 1, warmup: false });
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs every scenario without an error', () => {
    expect(report.errors).toEqual([]);
    expect(report.results.map((result) => result.name)).toEqual([
      'relay-rabbitmq',
      'relay-rabbitmq-peer',
      'relay-kafka-platformatic',
      'relay-kafka-ceiling',
      'relay-kafka-lock-shape',
      'worker-completions',
      'worker-completions-pg',
      'worker-commit-shape',
      'relay-scaling-x2',
      'e2e-latency-brokers',
    ]);
  });

  it('verifies every run: all events SENT, all receipts completed, all peer messages processed', () => {
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

  it('reports the CPU per 1,000 operations beside every throughput figure, both sides', () => {
    for (const result of report.results.filter((r) => r.better === 'higher')) {
      for (const side of [result.baseline, result.subject]) {
        expect({ name: result.name, cpu: side.extra.nodeCpuMsPer1k! > 0 }).toEqual({
          name: result.name,
          cpu: true,
        });
        expect({ name: result.name, pg: side.extra.pgCpuMsPer1k! >= 0 }).toEqual({
          name: result.name,
          pg: true,
        });
      }
    }
  });

  it("marks the peer scenario's target and reports both sides' first pass", () => {
    const peer = report.results.find((result) => result.name === 'relay-rabbitmq-peer')!;
    expect(peer.targets).toEqual([{ on: 'ratio', bound: 3, met: peer.ratio >= 3 }]);
    expect(Object.keys(peer.extraRatios).sort()).toEqual(['firstPass', 'nodeCpuMsPer1k', 'pgCpuMsPer1k']);
    expect(peer.baseline.samples[0]!.extra?.retries).toBeGreaterThanOrEqual(0);
  });

  it("marks the end-to-end target on the p50 (lower is better) and reports both sides' p99", () => {
    const e2e = report.results.find((result) => result.name === 'e2e-latency-brokers')!;
    expect(e2e.better).toBe('lower');
    expect(e2e.targets).toEqual([{ on: 'subject', bound: 15, met: e2e.subject.median <= 15 }]);
    for (const side of [e2e.baseline, e2e.subject]) {
      expect(side.extra.p99).toBeGreaterThanOrEqual(side.median);
    }
  });

  it("draws one row of two bars per scenario, with the ratio and the run's date", () => {
    const svg = renderChart(report);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg).toContain(report.startedAt.slice(0, 10));
    // A background and two legend squares, then two bars per scenario.
    expect(svg.match(/<rect /g)).toHaveLength(3 + 2 * report.results.length);
    for (const result of report.results) {
      expect(svg).toContain(`>${result.name}</text>`);
      expect(svg).toContain(`>x${format(result.ratio)}</text>`);
    }
  });

  it('escapes labels in the chart', () => {
    const [first] = report.results;
    const hostile = { ...report, results: [{ ...first!, name: '<b>&"x"' }] };
    const svg = renderChart(hostile);
    expect(svg).not.toContain('<b>');
    expect(svg).toContain('&#60;b&#62;&#38;&#34;x&#34;');
  });

  it('writes the report as JSON', () => {
    const file = writeReport(report, dir);
    expect(existsSync(file)).toBe(true);
    const written = JSON.parse(readFileSync(file, 'utf8')) as BenchReport;
    // The bench's Prisma clients prepare ferry's statements unless BENCH_PRISMA_NAMES=0; the relay
    // keeps sent events unless BENCH_SENT=delete.
    expect(written.options).toEqual({
      n: 20,
      rounds: 1,
      statements: 'Prisma, ferry statements prepared',
      onSent: 'keep',
    });
    expect(written.machine.cpus).toBeGreaterThan(0);
    expect(written.results.map((result) => result.name)).toEqual(report.results.map((result) => result.name));
  });

  it('renders the newest report of a results folder', () => {
    writeFileSync(path.join(dir, '2000-01-01T00-00-00-000Z.json'), '{}');
    const newest = writeReport(report, dir);
    expect(latestReport(dir)).toBe(newest);
  });
});

describe('bench number format', () => {
  it('keeps two significant digits of a small ratio', () => {
    expect([1234.5, 12.34, 1.234, 0.0046, 0].map(format)).toEqual(['1235', '12.3', '1.23', '0.0046', '0.00']);
  });
});

describe('bench targets', () => {
  it('are met at or beyond the bound, in the direction the scenario counts as better', () => {
    const targets = [
      { on: 'subject' as const, bound: 100 },
      { on: 'ratio' as const, bound: 0.5 },
    ];
    expect(checkTargets({ better: 'higher', targets }, 100, 0.4).map((t) => t.met)).toEqual([true, false]);
    expect(checkTargets({ better: 'lower', targets }, 120, 0.5).map((t) => t.met)).toEqual([false, true]);
    expect(checkTargets({ better: 'higher' }, 1, 1)).toEqual([]);
  });
});

describe("PostgreSQL's CPU across a run", () => {
  it("counts each process's growth and a new one whole, never a process that exited (CI: a sum went negative)", () => {
    const before = new Map([
      ['100', 500],
      ['101', 70],
      ['102', 40],
    ]);
    // 100 grew by 20 ticks, 101 exited (another program's connection ended), 102's pid went back
    // to fewer ticks (counted as no growth), 103 started: 20 + 0 + 10 ticks of 10 ms.
    const after = new Map([
      ['100', 520],
      ['102', 3],
      ['103', 10],
    ]);
    expect(postgresCpuMsBetween(before, after)).toBe(200 + 0 + 100);
  });
});
