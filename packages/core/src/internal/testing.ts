// Hooks for ferry's own tests and benchmarks (`@ferry/core/internal/testing`). Not part of the
// public API: anything here may change in any release. Applications use `@ferry/core`.
export { relayStore, type RelayStore } from '../outbox/store';
export { outboxRetryDelayMs, inboxRetryDelayMs, inboxRetryCeilingMs } from '../backoff';
export { canonicalJson, payloadFingerprint } from '../inbox/fingerprint';
