import {
  checkSchema,
  isFerryError,
  type MigrateResult,
  exportPrismaModels,
  exportSql,
  migrate,
  migrationsTableFor,
  MIGRATE_TIMEOUT_BOUNDS,
} from '@ferry/core';
import type { Command } from 'commander';
import { act } from '../act';
import type { Context } from '../command';
import { MIGRATE_STATEMENT_TIMEOUT_MS } from '../timeouts';
import { INTERRUPTED_EXIT, stopNotes, stoppedBy, untilInterrupted, type StopSignal } from '../interrupt';
import { FailedPartway } from '../failure';
import { printJson, printLine, printNote } from '../output';

/** Where to look after a second signal ended `migrate` unanswered. */
const MIGRATE_HINT = '`ferry check` says what is still pending; `ferry migrate` again skips what was applied';

/** How many of them the note names: any number may be recorded (review 123). */
const UNRECOGNIZED_SHOWN = 10;

/**
 * The note naming the ledger's migrations this ferry has no file for (a newer version applied
 * them: a rollback mid-deploy), on stderr: they fail nothing, the exit code stays 0 (review 115).
 * One line naming the first UNRECOGNIZED_SHOWN and counting the rest: all of them made one line of
 * any length (1,000 rows, some 20,000 characters; review 123). --json lists them all.
 */
function noteUnrecognized(ctx: Context, command: string, unrecognized: readonly string[] | undefined): void {
  if (unrecognized === undefined || unrecognized.length === 0) return;
  const rest = unrecognized.length - UNRECOGNIZED_SHOWN;
  const more = rest > 0 ? ` and ${rest} more (--json lists them all)` : '';
  printNote(
    ctx,
    `ferry ${command}: ${unrecognized.length} recorded migration(s) this version does not ship (applied by a newer one; left as they are): ${unrecognized.slice(0, UNRECOGNIZED_SHOWN).join(', ')}${more}`,
  );
}

/**
 * migrate's answer: `applied NAME` per migration and a summary, `not_attempted NAME` for those a
 * signal left (exit 130 / 143 then); under --json the result, with `interrupted` when a signal
 * left some. A signal during the last migration left nothing: the usual answer and exit 0.
 */
function printMigrated(ctx: Context, result: MigrateResult, signal: StopSignal | undefined): number {
  const left = result.notAttempted ?? [];
  const interrupted = signal !== undefined && left.length > 0 ? signal : undefined;
  noteUnrecognized(ctx, 'migrate', result.unrecognized);
  if (ctx.json) {
    printJson(ctx, interrupted === undefined ? result : { ...result, interrupted: { signal: interrupted } });
  } else {
    for (const name of result.applied) printLine(ctx, `applied ${name}`);
    for (const name of left) printLine(ctx, `not_attempted ${name}`);
    const notAttempted = interrupted === undefined ? '' : `, ${left.length} not attempted`;
    const stopped =
      interrupted === undefined ? '' : `; interrupted by ${interrupted}: run it again for the rest`;
    printLine(
      ctx,
      `ferry migrate: ${result.applied.length} applied, ${result.alreadyApplied.length} already applied${notAttempted}${stopped}`,
    );
  }
  return interrupted === undefined ? 0 : INTERRUPTED_EXIT[interrupted];
}

/**
 * A migration failed after this run applied others (core's `details.applied`, `notAttempted`):
 * they stay applied, so they are named before the error, as `applied NAME` / `not_attempted NAME`
 * lines (text) or `applied` / `notAttempted` beside `error` (--json). The exit code is the failure's.
 */
function failedMigrating(ctx: Context, error: unknown): unknown {
  const details = isFerryError(error) ? error.details : {};
  const { applied, notAttempted } = details;
  if (!Array.isArray(applied) || !Array.isArray(notAttempted)) return error;
  if (!ctx.json) {
    for (const name of applied) printLine(ctx, `applied ${String(name)}`);
    for (const name of notAttempted) printLine(ctx, `not_attempted ${String(name)}`);
  }
  return new FailedPartway(error, { answered: { applied, notAttempted } });
}

interface FolderOptions {
  migrationsDir?: string;
  table?: string;
}

/**
 * `--table` checked as the migrator checks `table`, before anything touches the database: a
 * malformed value is a usage error naming the flag (review 44: it was exit 1 in the library's
 * option names, after the connection), as every value the library refuses (errors.ts).
 */
function checkedFolder(o: FolderOptions): FolderOptions {
  migrationsTableFor(o);
  return o;
}

function folderOptions(command: Command): Command {
  return command
    .option('--migrations-dir <dir>', "an application's migrations folder instead of ferry's")
    .option('--table <name>', 'the table recording that folder (default app_migrations)');
}

export function registerSchema(program: Command, ctx: Context): void {
  folderOptions(
    program.command('migrate').description("apply ferry's pending migrations (or an application's folder)"),
  ).action(
    act<FolderOptions>(ctx, async (o) => {
      // Each migration's transaction gets the deadline too (ferry's library default is 2 min);
      // 0 is none, as migrate's timeoutMs: 0.
      const timeoutMs = ctx.statementTimeoutMs(MIGRATE_STATEMENT_TIMEOUT_MS, MIGRATE_TIMEOUT_BOUNDS);
      const folder = checkedFolder(o);
      const notes = stopNotes((line) => printNote(ctx, line), 'migrate', MIGRATE_HINT);
      // A first signal stops it between migrations (the one in flight commits or rolls back).
      return untilInterrupted(async (signal) => {
        const result = await ctx
          .db((db) => migrate(db, { ...folder, timeoutMs, signal }), { statementTimeoutMs: timeoutMs })
          .catch((error: unknown) => {
            throw failedMigrating(ctx, error);
          });
        return printMigrated(ctx, result, stoppedBy(signal));
      }, notes);
    }),
  );

  folderOptions(
    program
      .command('check')
      .description("verify ferry's schema (or an application's folder) without changing it"),
  ).action(
    act<FolderOptions>(ctx, async (o) => {
      const folder = checkedFolder(o);
      const { unrecognized } = await ctx.db((db) =>
        checkSchema(db, { ...folder, statementTimeoutMs: ctx.statementTimeoutMs() }),
      );
      noteUnrecognized(ctx, 'check', unrecognized);
      if (ctx.json)
        printJson(ctx, unrecognized.length === 0 ? { ready: true } : { ready: true, unrecognized });
      else printLine(ctx, 'ferry check: schema is ready');
    }),
  );

  program
    .command('schema')
    .description("print ferry's Prisma models, for applications that manage their schema with Prisma")
    .action(
      act(ctx, async () => {
        ctx.io.out(exportPrismaModels().trimEnd());
      }),
    );

  program
    .command('sql')
    .description(
      "print ferry's migrations as plain SQL (Prisma Migrate, Flyway, Liquibase); no database needed",
    )
    .option('--after <migration>', 'only the migrations after this one')
    .action(
      act<{ after?: string }>(ctx, async (o) => {
        ctx.io.out(exportSql({ after: o.after }).trimEnd());
      }),
    );
}
