// `@ferry/core/metrics`: Prometheus metrics through prom-client, an optional peer dependency.
import { promClient } from './promClient';

// Importing this entry point without prom-client installed fails here, naming the package.
promClient();

export { createFerryMetrics, type FerryMetrics } from './create';
export {
  METRICS_DEFAULT_BUCKETS,
  METRICS_LABEL_VALUES,
  METRICS_STATS_DEFAULTS,
  type FerryMetricsOptions,
  type MetricsStatsOptions,
} from './options';
export { serveMetrics, type MetricsServer, type ServeMetricsOptions } from './serve';
