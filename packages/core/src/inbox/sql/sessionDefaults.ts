/**
 * Session defaults a handler can change on its transaction's connection with a plain `SET` (where
 * it meant `SET LOCAL`) or `SET SESSION CHARACTERISTICS`, which its COMMIT keeps on the pooled
 * connection for whoever uses it next: ferry's own statements (READ ONLY refuses every acceptance
 * and claim with 25006; `synchronous_commit = off` would let an acceptance commit, and its
 * delivery be acknowledged, before its WAL reached the disk) and the application's.
 *
 * The handler transaction's first statement (beginHandler) reads them as the transaction found
 * them; its completion, the last statement before the COMMIT, puts back every one the handler
 * changed, session-wide (set_config(..., false)), so the COMMIT leaves the connection's defaults
 * as they were. A transaction that rolls back undoes the handler's `SET`s itself. A default the
 * database, the role or the application set before the transaction is never touched. The
 * timeouts (`statement_timeout`, `lock_timeout`, `idle_in_transaction_session_timeout`) are not
 * here: ferry sets them for the transaction itself, so the value it found is not readable then.
 */
const NAMES = [
  'default_transaction_read_only',
  'default_transaction_isolation',
  'default_transaction_deferrable',
  'synchronous_commit',
  'search_path',
  // Before role: the identity a handler's SET SESSION AUTHORIZATION (superuser) left may not SET
  // the role back (42501); put back first, it can, and it is not left on the connection either.
  // json_each_text reads the keys in this order.
  'session_authorization',
  'role',
  // How the server writes what ferry and the application read back: extra_float_digits -3 or
  // lower rounds the float8 milliseconds ferry reads every time as (dateColumn.ts), DateStyle
  // and IntervalStyle the text of dates and intervals, bytea_output bytes, client_encoding all
  // text (node-postgres reads UTF-8 only).
  'extra_float_digits',
  'TimeZone',
  'DateStyle',
  'IntervalStyle',
  'bytea_output',
  'client_encoding',
] as const;

/** The defaults as a JSON object's text (`{"search_path": "\"$user\", public", …}`). */
export const SESSION_DEFAULTS_READ = `json_build_object(${NAMES.map(
  (name) => `'${name}', current_setting('${name}')`,
).join(', ')})::text`;

/**
 * Puts back each default of `param` (SESSION_DEFAULTS_READ's text, or null: nothing) that differs
 * now; the number put back.
 */
export function sessionDefaultsRestore(param: string): string {
  return `(SELECT count(set_config(d.name, d.value, false))
             FROM json_each_text(${param}::json) AS d(name, value)
            WHERE current_setting(d.name) IS DISTINCT FROM d.value)`;
}
