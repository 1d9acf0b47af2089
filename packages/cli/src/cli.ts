import { isFerryError } from '@ferry/core';
import { parseArgs, type ParsedArgs } from './args';
import type { CliIo, Command } from './command';
import { checkCommand } from './commands/check';
import { inboxListCommand } from './commands/inboxList';
import { inboxRequeueCommand } from './commands/inboxRequeue';
import { inboxStatsCommand } from './commands/inboxStats';
import { migrateCommand } from './commands/migrate';
import { outboxListCommand } from './commands/outboxList';
import { outboxMarkFailedCommand } from './commands/outboxMarkFailed';
import { outboxRetryCommand } from './commands/outboxRetry';
import { outboxStatsCommand } from './commands/outboxStats';
import { databaseUrl, withDatabase } from './connection';
import { UsageError } from './usage';

interface CommandSpec {
  run: Command;
  synopsis: string;
  help: string;
  /** Flags beside --database-url and --help. */
  flags: readonly string[];
}

const OUTBOX_SCOPE = '[--tenant T]';
const INBOX_SCOPE = '(--tenant T | --global)';

const COMMANDS: Record<string, CommandSpec> = {
  migrate: {
    run: migrateCommand,
    synopsis: 'migrate [--migrations-dir DIR]',
    help: "apply ferry's pending migrations (idempotent, safe to run concurrently)",
    flags: ['migrations-dir'],
  },
  check: {
    run: checkCommand,
    synopsis: 'check [--migrations-dir DIR]',
    help: "verify ferry's schema without changing it",
    flags: ['migrations-dir'],
  },
  'outbox stats': {
    run: outboxStatsCommand,
    synopsis: `outbox stats ${OUTBOX_SCOPE} [--json]`,
    help: 'counts per status, expired leases, oldest pending age',
    flags: ['tenant', 'json'],
  },
  'outbox list': {
    run: outboxListCommand,
    synopsis: `outbox list --status S ${OUTBOX_SCOPE} [--limit N] [--cursor C] [--json]`,
    help: 'events in status S (PENDING, PROCESSING, SENT, FAILED), newest first',
    flags: ['status', 'tenant', 'limit', 'cursor', 'json'],
  },
  'outbox retry': {
    run: outboxRetryCommand,
    synopsis: `outbox retry <id...> ${OUTBOX_SCOPE} [--json]`,
    help: 'FAILED -> PENDING; prints applied / not_found / conflict / lost_claim per id',
    flags: ['tenant', 'json'],
  },
  'outbox mark-failed': {
    run: outboxMarkFailedCommand,
    synopsis: `outbox mark-failed <id> --reason R ${OUTBOX_SCOPE} [--json]`,
    help: 'PENDING -> FAILED with last_error R; prints the outcome',
    flags: ['reason', 'tenant', 'json'],
  },
  'inbox stats': {
    run: inboxStatsCommand,
    synopsis: `inbox stats ${INBOX_SCOPE} [--json]`,
    help: 'receipt counts per status, oldest unfinished receipt',
    flags: ['tenant', 'global', 'json'],
  },
  'inbox list': {
    run: inboxListCommand,
    synopsis: `inbox list --status S ${INBOX_SCOPE} [--limit N] [--cursor C] [--json]`,
    help: 'receipts in status S (PENDING, PROCESSING, RETRYABLE, COMPLETED, DEAD)',
    flags: ['status', 'tenant', 'global', 'limit', 'cursor', 'json'],
  },
  'inbox requeue': {
    run: inboxRequeueCommand,
    synopsis: `inbox requeue <id> --expected-version N --reason R --actor A ${INBOX_SCOPE} [--json]`,
    help: 'DEAD -> PENDING at the observed version (FERRY_STATE_CONFLICT when stale)',
    flags: ['expected-version', 'reason', 'actor', 'tenant', 'global', 'json'],
  },
};

const GROUPS = new Set(['outbox', 'inbox']);

export const USAGE = [
  'usage: ferry <command> [--database-url URL] [flags]',
  '',
  ...Object.values(COMMANDS).flatMap(({ synopsis, help }) => [`  ${synopsis}`, `      ${help}`]),
  '',
  'The database is --database-url, else FERRY_DATABASE_URL, else DATABASE_URL.',
  'Outbox commands without --tenant act on every tenant (operator scope).',
  'Inbox commands need --tenant or --global; there is no cross-tenant inbox access.',
  'Exit codes: 0 ok, 1 failure (FERRY_* code on stderr, or an outcome other than applied), 2 usage.',
].join('\n');

const consoleIo: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

/** `outbox retry a b` → name 'outbox retry', positionals [a, b]. */
function resolve(args: ParsedArgs): { name: string | undefined; args: ParsedArgs } {
  if (args.command === undefined || !GROUPS.has(args.command)) return { name: args.command, args };
  const [sub, ...positionals] = args.positionals;
  if (sub === undefined) return { name: undefined, args };
  return { name: `${args.command} ${sub}`, args: { ...args, positionals } };
}

/** Runs one CLI invocation and returns its exit code: 0 ok, 1 failed, 2 usage. */
export async function runCli(
  argv: readonly string[],
  io: CliIo = consoleIo,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const { name, args } = resolve(parseArgs(argv));
  const command = name === undefined ? undefined : COMMANDS[name];
  if (!command || args.flags.help !== undefined) {
    if (!command && name !== undefined) io.err(`ferry: unknown command "${name}"`);
    (command ? io.out : io.err)(USAGE);
    return command ? 0 : 2;
  }
  const allowed = new Set(['database-url', 'help', ...command.flags]);
  const unknown = Object.keys(args.flags).filter((flag) => !allowed.has(flag));
  const url = databaseUrl(args.flags['database-url'], env);
  try {
    if (unknown.length > 0) throw new UsageError(`unknown flag ${unknown.map((f) => `--${f}`).join(', ')}`);
    return await command.run({ args, io, db: (work) => withDatabase(url, work) });
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`ferry ${name}: ${error.message}`);
      io.err(USAGE);
      return 2;
    }
    if (isFerryError(error)) {
      io.err(`ferry ${name}: ${error.code}: ${error.message}`);
    } else {
      io.err(`ferry ${name}: ${error instanceof Error ? error.message : String(error)}`);
    }
    return 1;
  }
}
