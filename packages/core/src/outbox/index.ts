export { createEmitter, emit, emitMany, type EmitOptions, type Emitter } from './emit';
export { DEFAULT_ENVELOPE_LIMITS, type EnvelopeLimits, type OutboxEventInput } from './envelope/types';
export { validateEnvelope } from './envelope/validate';
export {
  MAX_DELAY_BOUND_MS,
  OUTBOX_DEFAULTS,
  OUTBOX_DEFAULT_CHANNEL,
  resolveOutboxOptions,
  type BackoffStrategy,
  type FailedHeadPolicy,
  type OutboxOptions,
  type ResolvedOutboxOptions,
} from './options';
export { retryDelayMs } from './backoff';
export { createRelay, type CycleResult, type Relay, type RelayConfig, type RelayState } from './relay';
export { relayStore, type RelayStore } from './store';
export type { OutboxObserver, FailReason } from './observer';
export type { OutboxRecord, OutboxStatus } from './record';
export {
  createOutboxAdmin,
  type AdminOutcome,
  type AdminResult,
  type HealthThresholds,
  type ListQuery,
  type OperatorOutboxAdmin,
  type OutboxAdmin,
  type OutboxHealth,
  type OutboxStats,
} from './admin';
