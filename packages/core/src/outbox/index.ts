export { createEmitter, emit, emitMany, type EmitOptions, type Emitter } from './emit';
export {
  DEFAULT_ENVELOPE_LIMITS,
  ENVELOPE_LIMIT_BOUNDS,
  type EnvelopeLimits,
  type OutboxEventInput,
} from './envelope/types';
export { validateEnvelope } from './envelope/validate';
export {
  MAX_DELAY_BOUND_MS,
  OUTBOX_DEFAULTS,
  OUTBOX_DEFAULT_CHANNEL,
  OUTBOX_OPTION_KEYS,
  resolveOutboxOptions,
  type BackoffStrategy,
  type FailedHeadPolicy,
  type OnSent,
  type OutboxOptions,
  type ResolvedOutboxOptions,
} from './options';
export { createRelay, type CycleResult, type Relay, type RelayConfig, type RelayState } from './relay';
export type { CircuitOutage } from './circuit';
export type { FailReason, OutboxEvent, OutboxObserver } from './events';
export type { OutboxRecord, OutboxStatus } from './record';
export {
  createOutboxAdmin,
  type AdminOutcome,
  type AdminResult,
  type AuditOptions,
  type HealthThresholds,
  type PurgeSentArgs,
  type ReleaseArgs,
  type ReleaseResult,
  type ListQuery,
  type ListSummaryQuery,
  type OperatorOutboxAdmin,
  type OutboxAdmin,
  type OutboxHealth,
  type OutboxPage,
  type OutboxStats,
  type OutboxSummary,
} from './admin';
