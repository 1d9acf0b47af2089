import type { MetricCounts } from './metrics';
import { ORDER_PATH, type OrderTrace } from './traces';

export interface DemoCounts {
  readonly offered: number;
  readonly accepted: number;
  readonly duplicatesAbsorbed: number;
  readonly deadLettered: number;
  readonly deadLetterReasons: Readonly<Record<string, number>>;
  readonly ordersWritten: number;
  readonly eventsOnKafka: number;
  readonly kafkaDeliveries: number;
  readonly latenciesMs: readonly number[];
  /** What ferry's metrics counted. */
  readonly metrics: MetricCounts;
  /** Orders whose whole path is in their one trace. */
  readonly tracesComplete: number;
  /** Distinct trace ids among the orders. */
  readonly distinctTraces: number;
}

export interface Expected {
  readonly offered: number;
  readonly valid: number;
  readonly duplicates: number;
  readonly invalid: number;
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))] as number;
}

/** The lines that disagree with what was offered; empty when the run is correct. */
export function disagreements(counts: DemoCounts, expected: Expected): string[] {
  const checks: [string, number, number][] = [
    ['accepted', counts.accepted, expected.valid],
    ['duplicates absorbed', counts.duplicatesAbsorbed, expected.duplicates],
    ['dead-lettered', counts.deadLettered, expected.invalid],
    ['orders written', counts.ordersWritten, expected.valid],
    ['events on Kafka', counts.eventsOnKafka, expected.valid],
    ['metrics: inbox accepted', counts.metrics.accepted, expected.valid],
    ['metrics: inbox duplicates', counts.metrics.duplicates, expected.duplicates],
    ['metrics: handler completions', counts.metrics.completed, expected.valid],
    ['metrics: outbox events sent', counts.metrics.sent, expected.valid],
    ['metrics: dead-lettered', counts.metrics.deadLettered, expected.invalid],
    ["traces holding an order's whole path", counts.tracesComplete, expected.valid],
    ['distinct trace ids', counts.distinctTraces, expected.valid],
  ];
  return checks
    .filter(([, actual, wanted]) => actual !== wanted)
    .map(([name, actual, wanted]) => `${name}: ${actual}, expected ${wanted}`);
}

export function formatReport(
  counts: DemoCounts,
  expected: Expected,
  elapsedMs: number,
  metricsUrl: string,
): string {
  const row = (name: string, value: number | string, note = '') =>
    `  ${name.padEnd(22)} ${String(value).padStart(8)}${note ? `   ${note}` : ''}`;
  return [
    'ferry demo report',
    row(
      'offered',
      counts.offered,
      `${expected.valid} orders, ${expected.duplicates} duplicates, ${expected.invalid} invalid`,
    ),
    row('accepted', counts.accepted, 'inbox receipts'),
    row('duplicates absorbed', counts.duplicatesAbsorbed),
    row(
      'dead-lettered',
      counts.deadLettered,
      `refused before acceptance: ${reasons(counts.deadLetterReasons)}`,
    ),
    row('orders written', counts.ordersWritten, 'by the handler, once each'),
    row('events on Kafka', counts.eventsOnKafka, `distinct; ${counts.kafkaDeliveries} deliveries read back`),
    row('latency p50', `${percentile(counts.latenciesMs, 50)} ms`, 'RabbitMQ publish to Kafka read-back'),
    row('latency p99', `${percentile(counts.latenciesMs, 99)} ms`),
    row('traces', counts.tracesComplete, 'one per order, each holding its whole path (listed above)'),
    row('elapsed', `${(elapsedMs / 1000).toFixed(1)} s`),
    `  ${'metrics'.padEnd(22)} ${metricsUrl}   ferry's metrics, checked against the counts above`,
  ].join('\n');
}

/** One line per order: its id and its trace id; an incomplete trace names the steps it lacks. */
export function formatTraces(traces: readonly OrderTrace[]): string {
  return [
    `ferry demo traces: order id -> trace id (${ORDER_PATH.join(' -> ')})`,
    ...traces.map(
      (t) =>
        `  order ${t.orderId}  trace ${t.traceId}${t.missing.length > 0 ? `  MISSING ${t.missing.join(', ')}` : ''}`,
    ),
  ].join('\n');
}

function reasons(byReason: Readonly<Record<string, number>>): string {
  const parts = Object.entries(byReason).map(([reason, n]) => `${reason} ${n}`);
  return parts.length > 0 ? parts.join(', ') : 'none';
}
