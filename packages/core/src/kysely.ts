// Kysely's transaction adapter (`@ferry/core/kysely`), apart from `@ferry/core` because kysely is
// an optional peer dependency: only applications that import this entry point need it installed.
export { fromKysely, kyselyTransactions } from './sql/kysely';
export type { KyselyInstanceLike, KyselyTransactionOf } from './sql/kysely';
