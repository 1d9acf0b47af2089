import type { Registry } from 'prom-client';
import { FerryConfigError } from '../errors';
import { loggerOption, type Logger } from '../observe/logger';
import {
  booleanOption,
  executorOption,
  integerOption,
  knownKeysOption,
  received,
  type OptionKeys,
} from '../optionChecks';
import type { SqlExecutor } from '../sql/executor';
import { statementTimeoutOption } from '../sql/statementDeadline';
import type { ResolvedStatsOptions } from './stats';

export interface FerryMetricsOptions {
  /** Where the metrics are registered; default a new prom-client Registry of their own. */
  registry?: Registry;
  /** Prefix of every metric name; default 'ferry_'. */
  prefix?: string;
  /** Gauges of the outbox and inbox tables, read on scrape. Without it there are none. */
  stats?: MetricsStatsOptions;
  /** Label the outbox metrics with the event's `type` (`event_type`); default true. */
  eventTypeLabel?: boolean;
  /** Label the stats gauges with the tenant (`tenant`, '' without one); default false. */
  tenantLabel?: boolean;
  /** Buckets of every histogram, in seconds; default METRICS_DEFAULT_BUCKETS. */
  buckets?: readonly number[];
  /**
   * The distinct values each label takes (the first seen; later ones are counted under
   * `other`); default 100, 1 to 10,000. Also the partitions a consumer lag series sums and the
   * consumers (`instance`) counted per source: later ones are left out (said once on `logger`).
   */
  maxLabelValues?: number;
  /**
   * Where failed stats reads are logged (warn), and once each the lag or consumer bound of
   * `maxLabelValues` reached; default pino `ferry.metrics`.
   */
  logger?: Logger;
}

export interface MetricsStatsOptions {
  /** The database to read (e.g. `fromPrisma(prisma)`). */
  db: SqlExecutor;
  /** Read the outbox table; default true. */
  outbox?: boolean;
  /** Read the inbox table; default true. */
  inbox?: boolean;
  /** A scrape waits at most this long for the read, then reports the last values; default 2,000 ms. */
  timeoutMs?: number;
  /** A read is reused by the scrapes within this time; default 5,000 ms (0: read on every scrape). */
  cacheMs?: number;
  /**
   * The read itself is given up after this (on fromPg its connection is destroyed), so a read
   * stuck on a silent connection does not keep every later read from starting; a slower read
   * still ends as the last value when it finishes within it. Default 30,000 ms, 100 to 3,600,000.
   */
  statementTimeoutMs?: number;
}

/** Seconds, from 1 ms to 5 minutes: handler and publish durations as well as end-to-end latency. */
export const METRICS_DEFAULT_BUCKETS: readonly number[] = [
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300,
];

export const METRICS_STATS_DEFAULTS = { timeoutMs: 2_000, cacheMs: 5_000 } as const;

/** Default and range of `maxLabelValues`: the distinct values of one label name. */
export const METRICS_LABEL_VALUES = { default: 100, min: 1, max: 10_000 } as const;

const KEYS = {
  registry: true,
  prefix: true,
  stats: true,
  eventTypeLabel: true,
  tenantLabel: true,
  buckets: true,
  maxLabelValues: true,
  logger: true,
} satisfies OptionKeys<FerryMetricsOptions>;
const STATS_KEYS = {
  db: true,
  outbox: true,
  inbox: true,
  timeoutMs: true,
  cacheMs: true,
  statementTimeoutMs: true,
} satisfies OptionKeys<MetricsStatsOptions>;

export interface ResolvedMetricsOptions {
  readonly registry: Registry | undefined;
  readonly prefix: string;
  readonly stats: ResolvedStatsOptions | null;
  readonly eventTypeLabel: boolean;
  readonly tenantLabel: boolean;
  readonly buckets: readonly number[];
  readonly maxLabelValues: number;
  readonly logger: Logger | undefined;
}

export function resolveMetricsOptions(options: FerryMetricsOptions): ResolvedMetricsOptions {
  options = knownKeysOption('', options, KEYS);
  const prefix = options.prefix ?? 'ferry_';
  if (typeof prefix !== 'string' || !/^([a-zA-Z_:][a-zA-Z0-9_:]*)?$/.test(prefix)) {
    throw new FerryConfigError(
      'prefix',
      `must be empty or a Prometheus metric name prefix, got ${received(prefix)}`,
    );
  }
  if (options.registry !== undefined && typeof options.registry?.metrics !== 'function') {
    throw new FerryConfigError(
      'registry',
      `must be a prom-client Registry, got ${received(options.registry)}`,
    );
  }
  return {
    registry: options.registry,
    prefix,
    stats: options.stats === undefined ? null : resolveStats(options.stats),
    eventTypeLabel: booleanOption('eventTypeLabel', options.eventTypeLabel ?? true),
    tenantLabel: booleanOption('tenantLabel', options.tenantLabel ?? false),
    buckets: buckets(options.buckets),
    maxLabelValues: integerOption(
      'maxLabelValues',
      options.maxLabelValues === undefined ? METRICS_LABEL_VALUES.default : options.maxLabelValues,
      METRICS_LABEL_VALUES.min,
      METRICS_LABEL_VALUES.max,
    ),
    logger: loggerOption('logger', options.logger),
  };
}

function resolveStats(stats: MetricsStatsOptions): ResolvedStatsOptions {
  stats = knownKeysOption('stats.', stats, STATS_KEYS);
  executorOption('stats.db', stats.db);
  return {
    db: stats.db,
    outbox: booleanOption('stats.outbox', stats.outbox ?? true),
    inbox: booleanOption('stats.inbox', stats.inbox ?? true),
    timeoutMs: integerOption(
      'stats.timeoutMs',
      stats.timeoutMs ?? METRICS_STATS_DEFAULTS.timeoutMs,
      1,
      60_000,
    ),
    cacheMs: integerOption('stats.cacheMs', stats.cacheMs ?? METRICS_STATS_DEFAULTS.cacheMs, 0, 3_600_000),
    statementTimeoutMs: statementTimeoutOption('stats.statementTimeoutMs', stats.statementTimeoutMs),
  };
}

function buckets(value: readonly number[] | undefined): readonly number[] {
  if (value === undefined) return METRICS_DEFAULT_BUCKETS;
  const valid =
    Array.isArray(value) &&
    value.length > 0 &&
    value.every(
      (b, i) =>
        typeof b === 'number' && Number.isFinite(b) && b > 0 && (i === 0 || b > (value[i - 1] as number)),
    );
  if (!valid)
    throw new FerryConfigError(
      'buckets',
      `must be increasing positive numbers (seconds), got ${received(value)}`,
    );
  return [...value];
}
