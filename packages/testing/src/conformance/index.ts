export { runTransportConformance } from './runTransportConformance';
export { MemoryAcceptor } from './memoryAcceptor';
export { diffIds, waitUntil } from './assertions';
export type {
  AttachedConsumer,
  ConformanceFeatures,
  DeadLetter,
  RawMessage,
  TransportConformanceOptions,
  TransportUnderTest,
} from './types';
