/**
 * The default of `ferry migrate`: 1 h. A migration can build an index on a large table, or wait on
 * the advisory lock while another process migrates ("safe concurrently"); 30 s would fail such a
 * deploy half-way. It is still a deadline: a database that went silent ends the command within
 * it. `--statement-timeout` gives migrate a longer one, or `0` for none (core's
 * MIGRATE_TIMEOUT_BOUNDS, those of migrate's `timeoutMs`).
 */
export const MIGRATE_STATEMENT_TIMEOUT_MS = 3_600_000;
