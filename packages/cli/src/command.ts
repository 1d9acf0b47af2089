import type { SqlExecutor } from '@ferry/core';
import type { ParsedArgs } from './args';

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

export interface CommandContext {
  /** For subcommands (`outbox retry`), `positionals` no longer hold the subcommand name. */
  args: ParsedArgs;
  io: CliIo;
  /** Runs work against the database chosen by --database-url / FERRY_DATABASE_URL / DATABASE_URL. */
  db<T>(work: (executor: SqlExecutor) => Promise<T>): Promise<T>;
}

export type Command = (context: CommandContext) => Promise<number>;
