export { Inbox, type InboxAcceptedReceipt, type InboxInternals } from './inbox';
export type { AcceptOutcome } from './accept';
export {
  resolveInboxOptions,
  INBOX_DEFAULTS,
  INBOX_WORKER_DEFAULTS,
  INBOX_WORKER_BOUNDS,
  MAX_PAYLOAD_BYTES_BOUNDS,
  type InboxOptions,
  type InboxWorkerOptions,
  type ResolvedInboxOptions,
  type ResolvedInboxWorkerOptions,
} from './options';
export {
  retryCeilingMs as inboxRetryCeilingMs,
  retryDelayMs as inboxRetryDelayMs,
  type RandomSource as InboxRandomSource,
} from './backoff';
export { canonicalJson, payloadFingerprint } from './fingerprint';
export {
  InboxPermanentError,
  InboxInvalidPayloadError,
  InboxUnsupportedSchemaError,
  InboxStateConflictError,
  InboxReplayConflictError,
  InboxFingerprintConflictError,
  InboxNotFoundError,
  InboxWrapperMisuseError,
  InboxLeaseLostError,
} from './errors';
export { createInboxTenancyContext, DEFAULT_TENANT_SETTING, type InboxTenancyOptions } from './tenancy';
export { InboxAdmin, InboxPrivilegedAdmin } from './admin/admin';
export {
  InboxScopedAdmin,
  type InboxListOptions,
  type InboxPage,
  type InboxRequeueInput,
  type InboxReplayInput,
  type InboxPurgeInput,
} from './admin/scoped';
export type { ReplayOutcome as InboxReplayOutcome } from './admin/replay';
export type { InboxStats } from './sql/stats';
export type { RunOnceResult } from './worker';
export type { InboxWorkerOps } from './workerOps';
export type { ClaimState } from './sql/readClaimState';
export { INBOX_TABLE } from './table';
export * from './types';
