// The application API (`@ferry/core`). Kysely's transaction adapter: `@ferry/core/kysely` (kysely
// is an optional peer dependency). Helpers for transport authors: `@ferry/core/transport`;
// Prometheus metrics (needs prom-client): `@ferry/core/metrics`;
// hooks for ferry's own tests and benchmarks: `@ferry/core/internal/testing` (no stability promise).
export {
  ERROR_CODES,
  FerryError,
  FerryConfigError,
  FerryValidationError,
  FerrySchemaError,
  ConsumerDisconnectedError,
  isFerryError,
  type FerryErrorCode,
  type FerryErrorOptions,
} from './errors';
export { isUuid } from './uuid';
export { IDENTIFIER_LIMITS } from './validate/identifierLimits';
export {
  fromPrisma,
  interactiveTransaction,
  prismaTransactions,
  type SqlExecutor,
  type TransactionAdapter,
  type TransactionOptions,
  type PrismaClientLike,
  type PrismaClientOf,
  type PrismaTransactionLike,
  type KyselyLike,
} from './sql/executor';
export { fromPg, pgTransactions } from './sql/fromPg';
export { ferryStatementNames, type NamedQuery } from './sql/statementNames';
export type { ApplicationTransaction } from './sql/applicationTransaction';
export { STATEMENT_TIMEOUT_BOUNDS, type StatementTimeoutOptions } from './sql/statementDeadline';
export { DATE_ARGUMENT_BOUNDS } from './optionChecks';
export { migrate, MIGRATE_TIMEOUT_BOUNDS, type MigrateOptions, type MigrateResult } from './schema/migrate';
export {
  checkSchema,
  verifyOutboxSchema,
  type CheckSchemaOptions,
  type CheckSchemaResult,
  type RequiredTables,
} from './schema/checkSchema';
export {
  loadMigrationFiles,
  defaultMigrationsDir,
  prismaModelsDir,
  type MigrationFile,
} from './schema/migrationFiles';
export { exportSql, exportPrismaModels, type ExportSqlOptions } from './schema/exportSchema';
export {
  FERRY_MIGRATIONS_TABLE,
  DEFAULT_APP_MIGRATIONS_TABLE,
  LEGACY_MIGRATIONS_TABLE,
  migrationsTableFor,
} from './schema/migrationsTable';
export type { LogFn, Logger } from './observe/logger';
export { combineObservers } from './observe/combine';
export {
  createRedactor,
  type InboxRedactionOptions,
  type InboxRedactor,
  type RedactionOptions,
  type Redactor,
} from './redact/redact';
export * from './contracts';
export * from './health';
export { createAuditLog, DEFAULT_ACTOR, type AuditEntry, type AuditLog, type AuditQuery } from './audit';
export * from './outbox';
export * from './inbox';
