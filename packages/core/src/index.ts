export {
  ERROR_CODES,
  FerryError,
  FerryConfigError,
  FerryValidationError,
  FerrySchemaError,
  isFerryError,
  type FerryErrorCode,
  type FerryErrorOptions,
} from './errors';
export {
  fromPrisma,
  interactiveTransaction,
  type SqlExecutor,
  type TransactionOptions,
  type PrismaClientLike,
  type PrismaTransactionLike,
} from './sql/executor';
export { fromPg } from './sql/fromPg';
export { migrate, type MigrateOptions, type MigrateResult } from './schema/migrate';
export { checkSchema, type CheckSchemaOptions, type RequiredTables } from './schema/checkSchema';
export { loadMigrationFiles, defaultMigrationsDir, type MigrationFile } from './schema/migrationFiles';
export { safeEmit } from './observe/safeEmit';
export { defaultLogger, type Logger } from './observe/logger';
export * from './contracts';
export * from './outbox';
export * from './inbox';
export * from './transport';
