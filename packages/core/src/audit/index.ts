export { createAuditLog, type AuditEntry, type AuditLog, type AuditQuery } from './log';
export { DEFAULT_ACTOR, type AuditOptions } from './audited';
