import { readFileSync } from 'node:fs';
import path from 'node:path';
import { FerryCommand } from './ferryCommand';
import type { Context } from './command';
import { statementTimeoutText } from './parse';
import { registerAudit } from './commands/audit';
import { registerHealth } from './commands/health';
import { registerInboxRead } from './commands/inboxRead';
import { registerInboxWrite } from './commands/inboxWrite';
import { registerOutboxRead } from './commands/outboxRead';
import { registerOutboxWrite } from './commands/outboxWrite';
import { registerSchema } from './commands/schema';
import { registerTop } from './commands/top';

function version(): string {
  const file = path.join(__dirname, '..', 'package.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

const FOOTER = `
The database is --database-url, else FERRY_DATABASE_URL, else DATABASE_URL (no default).
Each statement and admin transaction has a deadline (--statement-timeout, else
FERRY_STATEMENT_TIMEOUT, else 30s; 100ms..1h): past it the command fails with FERRY_TIMEOUT.
migrate's default is 1h; it takes a longer deadline too, or 0 for none (an index build).
Outbox commands without --tenant act on every tenant (operator scope); inbox commands need
--tenant or --global. Mutations take --dry-run, are audited (ferry audit list), and print one
outcome per id. Exit codes: 0 ok (every outcome applied, or accepted / duplicate for a replay),
1 failure or any other outcome, 2 usage, 130 / 143 a signal (SIGINT / SIGTERM) stopped it.`;

/** The whole command tree; output and exits go through `ctx` (commander never exits the process). */
export function buildProgram(ctx: Context, onError: (message: string) => void): FerryCommand {
  const program = new FerryCommand('ferry')
    .description('ferry operator CLI: schema, outbox and inbox operations, audit, health')
    .version(version(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help for a command')
    .option('--database-url <url>', 'PostgreSQL connection string')
    .option('--json', 'one JSON document per answer on stdout, errors included')
    .option(
      '--statement-timeout <age>',
      'deadline of each statement and admin transaction, 100ms..1h (default FERRY_STATEMENT_TIMEOUT, else 30s); migrate: default 1h, longer, or 0 for none',
      statementTimeoutText,
    )
    .exitOverride()
    .configureOutput({
      writeOut: (text) => ctx.io.out(text.trimEnd()),
      writeErr: (text) => ctx.io.err(text.trimEnd()),
      outputError: (text) => onError(text.trim()),
    })
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .addHelpText('after', FOOTER);
  registerSchema(program, ctx);
  const outbox = program
    .command('outbox')
    .description('outbox events: inspect, retry, mark failed, release, purge');
  registerOutboxRead(outbox, ctx);
  registerOutboxWrite(outbox, ctx);
  const inbox = program
    .command('inbox')
    .description('inbox receipts: inspect, requeue, replay, release, purge payloads');
  registerInboxRead(inbox, ctx);
  registerInboxWrite(inbox, ctx);
  registerAudit(program, ctx);
  registerHealth(program, ctx);
  registerTop(program, ctx);
  return program;
}
