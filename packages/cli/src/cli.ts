import { isFerryError } from '@ferry/core';
import { parseArgs } from './args';
import type { CliIo, Command } from './command';
import { checkCommand } from './commands/check';
import { migrateCommand } from './commands/migrate';
import { databaseUrl, withDatabase } from './connection';

const COMMANDS: Record<string, { run: Command; help: string }> = {
  migrate: {
    run: migrateCommand,
    help: "apply ferry's pending migrations (idempotent, safe to run concurrently)",
  },
  check: { run: checkCommand, help: "verify ferry's schema without changing it" },
};

const USAGE = [
  'usage: ferry <command> [--database-url URL] [--migrations-dir DIR]',
  '',
  ...Object.entries(COMMANDS).map(([name, { help }]) => `  ${name.padEnd(10)} ${help}`),
  '',
  'The database is --database-url, else FERRY_DATABASE_URL, else DATABASE_URL.',
].join('\n');

const consoleIo: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

/** Runs one CLI invocation and returns its exit code: 0 ok, 1 failed, 2 usage. */
export async function runCli(
  argv: readonly string[],
  io: CliIo = consoleIo,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const args = parseArgs(argv);
  const command = args.command === undefined ? undefined : COMMANDS[args.command];
  if (!command || args.flags.help !== undefined) {
    (command ? io.out : io.err)(USAGE);
    return command ? 0 : 2;
  }
  const url = databaseUrl(args.flags['database-url'], env);
  try {
    return await command.run({ args, io, db: (work) => withDatabase(url, work) });
  } catch (error) {
    if (isFerryError(error)) {
      io.err(`ferry ${args.command}: ${error.code}: ${error.message}`);
    } else {
      io.err(`ferry ${args.command}: ${error instanceof Error ? error.message : String(error)}`);
    }
    return 1;
  }
}
