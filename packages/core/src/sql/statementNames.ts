import { createHash } from 'node:crypto';

/**
 * The names ferry prepares its statements under: one per distinct parameterized text, derived
 * from the text (so every connection and process agrees on it), at most PREPARED_MAX per process.
 * ferry's statements are constant text, so the budget holds them all; past it, texts run unnamed.
 */
const PREPARED_MAX = 256;
const names = new Map<string, string>();

/** The name `text` is prepared under, registering it while the budget allows; else undefined. */
export function preparedName(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < PREPARED_MAX) {
    name = `ferry_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, name);
  }
  return name;
}

/** The part of `@prisma/adapter-pg`'s query that names it: its SQL text and its arguments. */
export interface NamedQuery {
  readonly sql: string;
  readonly args?: readonly unknown[];
}

/**
 * A `statementNameGenerator` for `@prisma/adapter-pg`: `new PrismaPg(pool, { statementNameGenerator:
 * ferryStatementNames })`. ferry's own parameterized statements sent through that Prisma client
 * (claims, completions, leases, acceptance, emit) run as named prepared statements, parsed and
 * planned once per connection instead of on every call; every other query, and any query without
 * arguments, gets '' (pg's unnamed statement), so the application's own queries run exactly as
 * without it. To name the
 * application's queries too, fall back to a generator of your own:
 * `(query) => ferryStatementNames(query) || mine(query)`.
 */
export function ferryStatementNames(query: NamedQuery): string {
  if (query.args?.length === 0) return '';
  return names.get(query.sql) ?? '';
}
