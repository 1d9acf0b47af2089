import type { Gauge } from 'prom-client';
import { readStatsByConsumer, type InboxGroupStats } from '../inbox/sql/stats';
import { INBOX_STATUSES, type InboxStatus } from '../inbox/types';
import type { LabelBound } from '../observe/cardinality';
import type { Logger } from '../observe/logger';
import { eventStatsByTenant, type TenantStatsRow } from '../outbox/sql/stats';
import { boundedExecutor } from '../sql/boundedExecutor';
import type { SqlExecutor } from '../sql/executor';
import { CachedRead, type ReadFailure } from './cachedRead';
import type { MetricFactory } from './factory';

export interface ResolvedStatsOptions {
  readonly db: SqlExecutor;
  readonly outbox: boolean;
  readonly inbox: boolean;
  readonly timeoutMs: number;
  readonly cacheMs: number;
  readonly statementTimeoutMs: number;
}

type Source = 'outbox' | 'inbox';
const OUTBOX_STATUSES = ['PENDING', 'PROCESSING', 'SENT', 'FAILED'] as const;

/**
 * Gauges of the outbox and inbox tables, read on scrape (prom-client `collect`) through one
 * CachedRead per table: a slow or hung database costs a scrape at most `timeoutMs`, reports the
 * last values and counts a `stats_scrape_errors_total`; the read itself is given up after
 * `statementTimeoutMs`, so a read hung on a silent connection does not block the next ones.
 * The labels the rows name (a consumer, a tenant) are bounded by `bound` as every other metric's:
 * the rows past it are merged into the `other` series (counts summed, the oldest age their
 * maximum), so totals stay exact. Returns what closes them: no read starts after it (the gauges
 * keep their last values), and it resolves once the reads in flight settled (review 105).
 */
export function statsMetrics(
  make: MetricFactory,
  bound: (labelName: string) => LabelBound,
  options: ResolvedStatsOptions,
  tenantLabel: boolean,
  logger: Logger,
): () => Promise<void> {
  const db = boundedExecutor(options.db, options.statementTimeoutMs, 'metrics stats', logger);
  const reads: CachedRead<unknown>[] = [];
  const errors = make.counter(
    'stats_scrape_errors_total',
    'Reads of the outbox / inbox tables that failed or missed their deadline during a scrape (the gauges then keep their last values)',
    ['source', 'reason'],
    async () => {
      await Promise.all(reads.map((read) => read.current()));
    },
  );
  const cachedRead = <T>(source: Source, read: () => Promise<T>): CachedRead<T> => {
    const onFailure = (reason: ReadFailure, error: unknown) => {
      errors.inc({ source, reason });
      logger.warn(
        { source, reason, err: error },
        'ferry metrics: stats read failed; gauges keep their last values',
      );
    };
    const cached = new CachedRead(read, { ...options, onFailure });
    reads.push(cached);
    return cached;
  };
  if (options.outbox) {
    const read = cachedRead('outbox', () => eventStatsByTenant(db, tenantLabel));
    const tenantOf = bound('tenant');
    const relabel = (row: TenantStatsRow) => ({ ...row, tenant: tenantOf(row.tenant) });
    outboxGauges(make, tenantLabel, async () => {
      const rows = await read.current();
      return rows && tenantLabel ? mergeRows(rows, relabel, (row) => row.tenant, mergeTenantRows) : rows;
    });
  }
  if (options.inbox) {
    const read = cachedRead('inbox', () => readStatsByConsumer(db, tenantLabel));
    const [consumerOf, tenantOf] = [bound('consumer'), bound('tenant')];
    const relabel = (row: InboxGroupStats) => ({
      ...row,
      consumer: consumerOf(row.consumer),
      tenant: tenantLabel ? tenantOf(row.tenant) : row.tenant,
    });
    inboxGauges(make, tenantLabel, async () => {
      const rows = await read.current();
      return (
        rows && mergeRows(rows, relabel, (row) => JSON.stringify([row.consumer, row.tenant]), mergeGroups)
      );
    });
  }
  return async () => {
    await Promise.all(reads.map((read) => read.close()));
  };
}

/**
 * `rows` relabelled (each label value through its bound), those whose labels became the same
 * (`other`) merged into one by `merge`, in their first row's place.
 */
function mergeRows<R>(
  rows: readonly R[],
  relabel: (row: R) => R,
  keyOf: (row: R) => string,
  merge: (a: R, b: R) => R,
): R[] {
  const merged = new Map<string, R>();
  for (const row of rows) {
    const labelled = relabel(row);
    const key = keyOf(labelled);
    const earlier = merged.get(key);
    merged.set(key, earlier === undefined ? labelled : merge(earlier, labelled));
  }
  return [...merged.values()];
}

/** A sum of counts, null (not counted) when either is. */
const sumOf = (a: number | string | null, b: number | string | null): number | null =>
  a === null || b === null ? null : Number(a) + Number(b);

/** The larger of two ages, null when neither has one. */
const oldestOf = (a: number | string | null, b: number | string | null): number | null =>
  a === null ? (b === null ? null : Number(b)) : b === null ? Number(a) : Math.max(Number(a), Number(b));

function mergeTenantRows(a: TenantStatsRow, b: TenantStatsRow): TenantStatsRow {
  const oldest = oldestOf(a.oldest_pending_ms, b.oldest_pending_ms);
  return {
    tenant: a.tenant,
    pending: Number(a.pending) + Number(b.pending),
    processing: Number(a.processing) + Number(b.processing),
    failed: Number(a.failed) + Number(b.failed),
    expired_leases: Number(a.expired_leases) + Number(b.expired_leases),
    oldest_pending_ms: oldest === null ? null : String(oldest),
    sent: sumOf(a.sent, b.sent),
    sent_estimated: a.sent_estimated || b.sent_estimated,
  };
}

function mergeGroups(a: InboxGroupStats, b: InboxGroupStats): InboxGroupStats {
  const counts = Object.fromEntries(
    INBOX_STATUSES.map((status) => [status, sumOf(a.counts[status], b.counts[status])]),
  ) as Record<InboxStatus, number | null>;
  return {
    consumer: a.consumer,
    tenant: a.tenant,
    counts,
    oldestUnfinishedAgeMs: oldestOf(a.oldestUnfinishedAgeMs, b.oldestUnfinishedAgeMs),
    expiredLeases: a.expiredLeases + b.expiredLeases,
  };
}

/** A gauge whose every series is replaced on collect by `apply` of the last rows (kept when none). */
function collected<L extends string, R>(
  make: MetricFactory,
  name: string,
  help: string,
  labelNames: readonly L[],
  rows: () => Promise<readonly R[] | null>,
  apply: (gauge: Gauge<L>, row: R) => void,
): void {
  const gauge: Gauge<L> = make.gauge(name, help, labelNames, async () => {
    const current = await rows();
    if (current === null) return;
    gauge.reset();
    for (const row of current) apply(gauge, row);
  });
}

function outboxGauges(
  make: MetricFactory,
  tenantLabel: boolean,
  read: () => Promise<TenantStatsRow[] | null>,
): void {
  const tenant = (row: { tenant: string }) => (tenantLabel ? { tenant: row.tenant } : {});
  const labels: 'tenant'[] = tenantLabel ? ['tenant'] : [];
  // Without the tenant label an empty table is one row of zeros, not no series.
  const rows = async () => {
    const current = await read();
    if (current === null || tenantLabel || current.length > 0) return current;
    return [
      {
        tenant: '',
        pending: 0,
        processing: 0,
        sent: 0,
        failed: 0,
        expired_leases: 0,
        oldest_pending_ms: null,
        sent_estimated: false,
      },
    ];
  };
  collected(make, 'outbox_events', 'Outbox events by status', [...labels, 'status'], rows, (gauge, row) => {
    for (const status of OUTBOX_STATUSES) {
      // null: SENT rows beyond the exact limit, not counted per tenant (no series).
      const value = row[status.toLowerCase() as Lowercase<typeof status>];
      if (value !== null) gauge.set({ ...tenant(row), status }, Number(value));
    }
  });
  collected(
    make,
    'outbox_oldest_pending_age_seconds',
    'Age of the oldest PENDING event on the database clock (0 when none is pending)',
    labels,
    rows,
    (gauge, row) =>
      gauge.set(tenant(row), row.oldest_pending_ms === null ? 0 : Number(row.oldest_pending_ms) / 1000),
  );
  collected(
    make,
    'outbox_expired_leases',
    'PROCESSING events whose lease expired (lease recovery will requeue them)',
    labels,
    rows,
    (gauge, row) => gauge.set(tenant(row), row.expired_leases),
  );
}

function inboxGauges(
  make: MetricFactory,
  tenantLabel: boolean,
  rows: () => Promise<InboxGroupStats[] | null>,
): void {
  const labelsOf = (row: InboxGroupStats) =>
    tenantLabel ? { consumer: row.consumer, tenant: row.tenant } : { consumer: row.consumer };
  const labels: ('consumer' | 'tenant')[] = tenantLabel ? ['consumer', 'tenant'] : ['consumer'];
  collected(
    make,
    'inbox_receipts',
    'Inbox receipts by consumer and status',
    [...labels, 'status'],
    rows,
    (gauge, row) => {
      for (const status of INBOX_STATUSES) {
        // null: COMPLETED receipts beyond the exact limit, not counted per group (no series).
        const value = row.counts[status];
        if (value !== null) gauge.set({ ...labelsOf(row), status }, value);
      }
    },
  );
  collected(
    make,
    'inbox_oldest_unfinished_age_seconds',
    'Age of the oldest PENDING, RETRYABLE or PROCESSING receipt on the database clock (0 when none)',
    labels,
    rows,
    (gauge, row) => gauge.set(labelsOf(row), (row.oldestUnfinishedAgeMs ?? 0) / 1000),
  );
  collected(
    make,
    'inbox_expired_leases',
    'PROCESSING receipts whose lease expired (a dead worker; see admin release)',
    labels,
    rows,
    (gauge, row) => gauge.set(labelsOf(row), row.expiredLeases),
  );
}
