/**
 * The default of `ferry migrate`: the largest deadline the flag accepts. A migration can build an
 * index on a large table, or wait on the advisory lock while another process migrates ("safe
 * concurrently"); 30 s would fail such a deploy half-way. It is still a deadline: a database that
 * went silent ends the command within it.
 */
export const MIGRATE_STATEMENT_TIMEOUT_MS = 3_600_000;
