export { runTransportConformance } from './runTransportConformance';
export { MemoryAcceptor } from './memoryAcceptor';
export { diffIds, waitUntil } from './assertions';
export { SKIPPED_PREFIX } from './unsupported';
export type {
  AttachContext,
  AttachedConsumer,
  ConformanceFeatures,
  DeadLetter,
  FeatureSupport,
  RawMessage,
  TransportConformanceOptions,
  TransportContext,
  TransportUnderTest,
} from './types';
