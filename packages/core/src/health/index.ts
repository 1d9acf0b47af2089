export { createHealth } from './createHealth';
export type {
  FerryHealth,
  HealthCheck,
  HealthDetails,
  HealthOptions,
  HealthReport,
  InboxThresholds,
  LoopSource,
  TransportProbe,
} from './types';
