/**
 * The Kysely methods ferry calls on an instance or a `Transaction` (fromKysely): what tells a
 * Kysely apart where it is given (fromKysely's `db`, emit's `tx`, an admin's client), without
 * loading kysely.ts (applications without Kysely never load it).
 */
export const KYSELY_METHODS = ['executeQuery', 'getExecutor'] as const;
