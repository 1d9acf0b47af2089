export {
  Inbox,
  createInbox,
  type InboxAcceptedReceipt,
  type InboxClient,
  type InboxInternals,
} from './inbox';
export type { AcceptOutcome } from './accept';
export { INBOX_INPUT_LIMITS } from './validateInput';
export { INBOX_REQUEUE_HISTORY_LIMIT } from './sql/requeueDead';
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
  InboxPermanentError,
  InboxGlobalScopeRejectedError,
  InboxInvalidPayloadError,
  InboxUnsupportedSchemaError,
  InboxStateConflictError,
  REPLAY_PAYLOAD_PURGED,
  InboxReplayConflictError,
  InboxFingerprintConflictError,
  InboxAdmissionRejectedError,
  InboxNotFoundError,
  InboxWrapperMisuseError,
  InboxLeaseLostError,
} from './errors';
export { createInboxTenancyContext, DEFAULT_TENANT_SETTING, type InboxTenancyOptions } from './tenancy';
export { InboxAdmin, InboxPrivilegedAdmin } from './admin/admin';
export { ROW_VERSION_BOUNDS } from './admin/validate';
export {
  InboxScopedAdmin,
  type InboxListOptions,
  type InboxPage,
  type InboxRequeueInput,
  type InboxReplayInput,
  type InboxPurgeInput,
  type InboxReleaseInput,
} from './admin/scoped';
export type { InboxReplayOutcome } from './admin/replay';
export type { InboxStats } from './sql/stats';
export type { ReleasedReceipts as InboxReleaseResult } from './sql/releaseStuck';
export type { RunOnceResult } from './worker';
export type { InboxClaimCycling, InboxSessionOutage } from './sessionOutage';
export type { InboxWorkerOps } from './workerOps';
export type { ClaimState } from './sql/readClaimState';
export { INBOX_TABLE } from './table';
export { INBOX_CHANNEL } from './wakeup';
export * from './types';
