import { createHash } from 'node:crypto';

/**
 * The names ferry prepares its statements under: one per distinct parameterized text, derived
 * from the text (so every connection and process agrees on it), at most PREPARED_MAX per process.
 * ferry's statements are constant text, so the budget holds them all; past it, texts run unnamed.
 */
const PREPARED_MAX = 256;
/** Texts and the names they were given (of generation 0; see preparedLost). */
const names = new Map<string, string>();

/** Times every name was replaced (preparedLost); past GENERATIONS_MAX, texts run unnamed. */
const GENERATIONS_MAX = 3;
let generation = 0;

function current(base: string | undefined): string | undefined {
  if (base === undefined || generation > GENERATIONS_MAX) return undefined;
  return generation === 0 ? base : `${base}_g${generation}`;
}

/** The name `text` is prepared under, registering it while the budget allows; else undefined. */
export function preparedName(text: string): string | undefined {
  let base = names.get(text);
  if (base === undefined && names.size < PREPARED_MAX) {
    base = `ferry_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, base);
  }
  return current(base);
}

/**
 * A statement sent as `name` failed with SQLSTATE 26000: PostgreSQL no longer has it on that
 * connection (DEALLOCATE ALL or DISCARD ALL behind the driver, which dropped the others too),
 * while the driver still takes them for prepared there and would send them unparsed on every
 * later use. On a Prisma client the connection stays in the pool (fromPg destroys it instead), so
 * every text gets a new name, which each connection prepares afresh on its next use: only the
 * statement that met the loss fails. After GENERATIONS_MAX losses (say, a pooler that does not
 * keep prepared statements) ferry's statements run unnamed.
 */
export function preparedLost(name: string): void {
  // A loss met under an older name was answered already (a concurrent statement met it first).
  if (generation <= GENERATIONS_MAX && name === current(name.replace(/_g\d+$/, ''))) generation += 1;
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
  return current(names.get(query.sql)) ?? '';
}
