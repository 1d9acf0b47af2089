import type { Gauge } from 'prom-client';
import { readStatsByConsumer, type InboxGroupStats } from '../inbox/sql/stats';
import { INBOX_STATUSES } from '../inbox/types';
import type { Logger } from '../observe/logger';
import { eventStatsByTenant, type TenantStatsRow } from '../outbox/sql/stats';
import { withTranslation } from '../sql/dbErrors';
import type { SqlExecutor } from '../sql/executor';
import { withDeadlines } from '../sql/statementDeadline';
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
 */
export function statsMetrics(
  make: MetricFactory,
  options: ResolvedStatsOptions,
  tenantLabel: boolean,
  logger: Logger,
): void {
  const db = withTranslation(
    withDeadlines(options.db, options.statementTimeoutMs),
    'metrics stats',
    undefined,
    logger,
  );
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
    outboxGauges(make, tenantLabel, () => read.current());
  }
  if (options.inbox) {
    const read = cachedRead('inbox', () => readStatsByConsumer(db, tenantLabel));
    inboxGauges(make, tenantLabel, () => read.current());
  }
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
