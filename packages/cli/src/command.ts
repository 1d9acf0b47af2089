import type { SqlExecutor } from '@ferry/core';

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  /** True when standard output is a terminal: the refreshing `top` screen. */
  readonly isTTY?: boolean;
  /**
   * The terminal progress bars draw on: standard error when it is a terminal (whatever standard
   * output is), else undefined and no bar. Decided by the stream drawn on (review 102: a bar
   * switched on by stdout being a terminal drew nothing when only stderr was one).
   */
  readonly progress?: NodeJS.WritableStream & { readonly isTTY?: boolean };
  /**
   * Aborted once the reader of standard output is gone (EPIPE: `ferry … | head -2`): `out` then
   * writes nothing, the command ends with its own exit code, and `top` stops refreshing.
   */
  readonly closed?: AbortSignal;
}

/** What every command gets: output, the environment, and the database. */
export interface Context {
  readonly io: CliIo;
  readonly env: NodeJS.ProcessEnv;
  /** --json: one JSON document per answer on stdout, errors included. */
  readonly json: boolean;
  /**
   * --statement-timeout, else FERRY_STATEMENT_TIMEOUT, else `fallbackMs` (30 s): the deadline of
   * each statement and admin transaction (read once the command line is parsed), within `bounds`
   * (default core's STATEMENT_TIMEOUT_BOUNDS, 100ms..1h; a value outside is a usage error).
   */
  statementTimeoutMs(fallbackMs?: number, bounds?: readonly [number, number]): number;
  /**
   * Runs work against --database-url / FERRY_DATABASE_URL / DATABASE_URL. `defaults` of the first
   * call is the deadline the command resolved for the invocation's connections (`migrate`'s,
   * longer or none); else statementTimeoutMs().
   */
  db<T>(
    work: (executor: SqlExecutor) => Promise<T>,
    defaults?: { readonly statementTimeoutMs: number },
  ): Promise<T>;
  /** The exit code the command chose (0 unless set). */
  exitCode: number;
}
