import type { Counter, Gauge, Histogram, Metric, Registry } from 'prom-client';
import { FerryConfigError } from '../errors';
import type { Prom } from './promClient';

type Collect = () => Promise<void> | void;

/**
 * Makes ferry's metrics, each name prefixed, every histogram with the same buckets. Nothing is
 * registered until `register()`, which first checks every name against the registry, so a
 * clash registers none of them (never half a set).
 */
export interface MetricFactory {
  counter<L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    collect?: Collect,
  ): Counter<L>;
  gauge<L extends string>(name: string, help: string, labelNames: readonly L[], collect?: Collect): Gauge<L>;
  histogram<L extends string>(name: string, help: string, labelNames: readonly L[]): Histogram<L>;
  /** Registers every metric made so far on the registry; FerryConfigError if one name is taken. */
  register(): void;
  /**
   * Takes every metric `register()` registered off the registry, each only while the registry
   * still holds that very metric under its name (one registered since by another is left).
   */
  unregister(): void;
}

export function metricFactory(
  prom: Prom,
  registry: Registry,
  prefix: string,
  buckets: readonly number[],
): MetricFactory {
  const made: { readonly name: string; readonly metric: Metric }[] = [];
  const keep = <M extends Metric>(metric: M, name: string): M => {
    made.push({ name: `${prefix}${name}`, metric });
    return metric;
  };
  const registers: Registry[] = [];
  return {
    counter: (name, help, labelNames, collect) =>
      keep(
        new prom.Counter({
          name: `${prefix}${name}`,
          help,
          labelNames,
          registers,
          ...(collect ? { collect } : {}),
        }),
        name,
      ),
    gauge: (name, help, labelNames, collect) =>
      keep(
        new prom.Gauge({
          name: `${prefix}${name}`,
          help,
          labelNames,
          registers,
          ...(collect ? { collect } : {}),
        }),
        name,
      ),
    histogram: (name, help, labelNames) =>
      keep(
        new prom.Histogram({ name: `${prefix}${name}`, help, labelNames, registers, buckets: [...buckets] }),
        name,
      ),
    register() {
      const taken = made.find(({ name }) => registry.getSingleMetric(name) !== undefined);
      if (taken) {
        throw new FerryConfigError(
          'registry',
          `already holds a metric named ${taken.name}: give each createFerryMetrics its own registry or prefix, or close() the earlier one`,
        );
      }
      for (const { metric } of made) registry.registerMetric(metric);
    },
    unregister() {
      for (const { name, metric } of made) {
        if (registry.getSingleMetric(name) === metric) registry.removeSingleMetric(name);
      }
    },
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
