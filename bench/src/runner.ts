import { postgresCpu, postgresCpuMsBetween } from './pgCpu';

/**
 * Runs each scenario beside its baseline in the same process: a small warm-up pair, then
 * `rounds` alternating pairs (baseline, subject, baseline, subject, ...), and reports the median
 * of each side and their ratio. Absolute figures on a shared 2-core machine are noise; the ratio
 * of two medians measured minutes apart in one process is what the benchmarks claim.
 */

/** One timed run of one side. `value` is in the scenario's unit (ops/s, or ms for latency). */
export interface Sample {
  readonly value: number;
  /** Operations the run completed (events sent, messages acked, receipts completed). */
  readonly ops: number;
  readonly elapsedMs: number;
  /** The run checked its own outcome (every event SENT, every delivery acked, ...). */
  readonly verified: boolean;
  /** Secondary figures in the same unit family, e.g. `p99` for a latency scenario. */
  readonly extra?: Readonly<Record<string, number>>;
}

/** A scenario's resources (database, queues, clients), opened once for all its rounds. */
export interface ScenarioInstance {
  baseline(n: number): Promise<Sample>;
  subject(n: number): Promise<Sample>;
  close(): Promise<void>;
}

export interface Scenario {
  readonly name: string;
  /** `events/s`, `msgs/s`, `completions/s`, `ms`. */
  readonly unit: string;
  /** Whether a larger value is better (throughput) or a smaller one (latency). */
  readonly better: 'higher' | 'lower';
  readonly baselineLabel: string;
  readonly subjectLabel: string;
  /** Messages per round when the scenario does not use the run's N (latency scenarios). */
  readonly n?: (runN: number) => number;
  /** What the project aims for; the table marks each one met or MISSED (the exit code ignores them). */
  readonly targets?: readonly Target[];
  open(): Promise<ScenarioInstance>;
}

/**
 * A goal on the subject's median (`subject`, in the scenario's unit) or on the ratio; reached
 * when at least the bound (a higher-is-better scenario) or at most it (lower-is-better).
 */
export interface Target {
  readonly on: 'subject' | 'ratio';
  readonly bound: number;
}

export interface TargetResult extends Target {
  readonly met: boolean;
}

/** Each target of `scenario` checked against the medians and ratio measured. */
export function checkTargets(
  scenario: Pick<Scenario, 'better' | 'targets'>,
  subject: number,
  ratio: number,
): TargetResult[] {
  return (scenario.targets ?? []).map((target) => {
    const value = target.on === 'subject' ? subject : ratio;
    const met = scenario.better === 'higher' ? value >= target.bound : value <= target.bound;
    return { ...target, met };
  });
}

export interface BenchOptions {
  /** Messages (events, deliveries, receipts) per round. */
  readonly n: number;
  readonly rounds: number;
  /** Warm-up pair with n / 10 messages before the measured rounds. Default true. */
  readonly warmup?: boolean;
  readonly log?: (line: string) => void;
}

export interface SideResult {
  readonly label: string;
  readonly median: number;
  readonly samples: readonly Sample[];
  /** Medians of each `extra` figure over the samples. */
  readonly extra: Readonly<Record<string, number>>;
}

export interface ScenarioResult {
  readonly name: string;
  readonly unit: string;
  readonly better: 'higher' | 'lower';
  readonly n: number;
  readonly baseline: SideResult;
  readonly subject: SideResult;
  /** subject median / baseline median. */
  readonly ratio: number;
  /** The same ratio for each extra figure. */
  readonly extraRatios: Readonly<Record<string, number>>;
  readonly verified: boolean;
  readonly targets: readonly TargetResult[];
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The q-quantile (0..1) by nearest rank. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1]!;
}

/** A throughput sample: `ops` finished in `elapsedMs`. */
export function rate(ops: number, elapsedMs: number, verified: boolean): Sample {
  return { value: ops / (Math.max(elapsedMs, 0.001) / 1000), ops, elapsedMs, verified };
}

/**
 * Times `work` (which returns the number of operations and whether it verified its outcome), with
 * the CPU it cost beside the rate: `nodeCpuMsPer1k`, this process's (user + system) per 1,000
 * operations, and `pgCpuMsPer1k`, the machine's PostgreSQL processes' (Linux only). The sides of a
 * scenario never run at once, so each figure is that side's own; a broker's CPU (Kafka's JVM,
 * RabbitMQ, ElasticMQ) is in neither.
 */
export async function timed(work: () => Promise<{ ops: number; verified: boolean }>): Promise<Sample> {
  const pgBefore = postgresCpu();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const { ops, verified } = await work();
  const elapsedMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const pgAfter = postgresCpu();
  const per1k = (ms: number): number => (ops > 0 ? (ms / ops) * 1000 : Number.NaN);
  const extra: Record<string, number> = { nodeCpuMsPer1k: per1k((cpu.user + cpu.system) / 1000) };
  if (pgBefore !== undefined && pgAfter !== undefined)
    extra.pgCpuMsPer1k = per1k(postgresCpuMsBetween(pgBefore, pgAfter));
  return { ...rate(ops, elapsedMs, verified), extra };
}

function side(label: string, samples: readonly Sample[]): SideResult {
  const names = new Set(samples.flatMap((sample) => Object.keys(sample.extra ?? {})));
  const extra: Record<string, number> = {};
  for (const name of names) extra[name] = median(samples.map((sample) => sample.extra?.[name] ?? Number.NaN));
  return { label, median: median(samples.map((sample) => sample.value)), samples, extra };
}

export async function runScenario(scenario: Scenario, options: BenchOptions): Promise<ScenarioResult> {
  const n = scenario.n ? scenario.n(options.n) : options.n;
  const log = options.log ?? (() => undefined);
  const instance = await scenario.open();
  const baseline: Sample[] = [];
  const subject: Sample[] = [];
  try {
    if (options.warmup ?? true) {
      const warm = Math.max(1, Math.floor(n / 10));
      await instance.baseline(warm);
      await instance.subject(warm);
    }
    for (let round = 1; round <= options.rounds; round += 1) {
      baseline.push(await instance.baseline(n));
      subject.push(await instance.subject(n));
      log(
        `  ${scenario.name} round ${round}/${options.rounds}: baseline ${format(baseline.at(-1)!.value)} ` +
          `subject ${format(subject.at(-1)!.value)} ${scenario.unit}`,
      );
    }
  } finally {
    await instance.close();
  }
  const b = side(scenario.baselineLabel, baseline);
  const s = side(scenario.subjectLabel, subject);
  const extraRatios: Record<string, number> = {};
  for (const name of Object.keys(s.extra))
    extraRatios[name] = (s.extra[name] ?? NaN) / (b.extra[name] ?? NaN);
  return {
    name: scenario.name,
    unit: scenario.unit,
    better: scenario.better,
    n,
    baseline: b,
    subject: s,
    ratio: s.median / b.median,
    extraRatios,
    verified: [...baseline, ...subject].every((sample) => sample.verified),
    targets: checkTargets(scenario, s.median, s.median / b.median),
  };
}

export interface BenchReport {
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly machine: {
    readonly cpus: number;
    readonly cpuModel: string;
    readonly node: string;
    readonly platform: string;
  };
  readonly options: {
    readonly n: number;
    readonly rounds: number;
    /** Where ferry's statements run: Prisma with them prepared or unnamed (BENCH_PRISMA_NAMES), or node-postgres. */
    readonly statements?: string;
    /** The relay scenarios' `onSent` (BENCH_SENT). */
    readonly onSent?: string;
  };
  readonly results: readonly ScenarioResult[];
  /** Scenarios that threw, with the error; the others still ran. */
  readonly errors: readonly { readonly name: string; readonly error: string }[];
}

export function format(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Math.abs(value) >= 100) return value.toFixed(0);
  if (Math.abs(value) >= 10) return value.toFixed(1);
  // Two significant digits below 0.01 (a ratio of 0.0046 is not 0.00).
  if (value !== 0 && Math.abs(value) < 0.01) return value.toPrecision(2);
  return value.toFixed(2);
}
