import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { FerryConfigError } from '../errors';
import type { Prom } from './promClient';

type Collect = () => Promise<void> | void;

/** Makes ferry's metrics on one registry, each name prefixed, every histogram with the same buckets. */
export interface MetricFactory {
  counter<L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    collect?: Collect,
  ): Counter<L>;
  gauge<L extends string>(name: string, help: string, labelNames: readonly L[], collect?: Collect): Gauge<L>;
  histogram<L extends string>(name: string, help: string, labelNames: readonly L[]): Histogram<L>;
}

export function metricFactory(
  prom: Prom,
  registry: Registry,
  prefix: string,
  buckets: readonly number[],
): MetricFactory {
  const named = (name: string): string => {
    const full = `${prefix}${name}`;
    if (registry.getSingleMetric(full)) {
      throw new FerryConfigError(
        'registry',
        `already holds a metric named ${full}: give each createFerryMetrics its own registry or prefix`,
      );
    }
    return full;
  };
  const registers = [registry];
  return {
    counter: (name, help, labelNames, collect) =>
      new prom.Counter({ name: named(name), help, labelNames, registers, ...(collect ? { collect } : {}) }),
    gauge: (name, help, labelNames, collect) =>
      new prom.Gauge({ name: named(name), help, labelNames, registers, ...(collect ? { collect } : {}) }),
    histogram: (name, help, labelNames) =>
      new prom.Histogram({ name: named(name), help, labelNames, registers, buckets: [...buckets] }),
  };
}

export type InfrastructureErrors = Counter<'component' | 'operation'>;

/** The one counter of failed database calls of the relay (`component` outbox) and the inbox worker. */
export function infrastructureErrors(make: MetricFactory): InfrastructureErrors {
  return make.counter(
    'infrastructure_errors_total',
    'Database calls of the relay (component outbox) or the inbox worker (component inbox) that failed; they back off and go on',
    ['component', 'operation'],
  );
}
