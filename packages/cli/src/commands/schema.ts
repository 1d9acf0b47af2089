import {
  checkSchema,
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
import { printJson, printLine } from '../output';

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
      const result = await ctx.db((db) => migrate(db, { ...folder, timeoutMs }), {
        statementTimeoutMs: timeoutMs,
      });
      if (ctx.json) return printJson(ctx, result);
      for (const name of result.applied) printLine(ctx, `applied ${name}`);
      printLine(
        ctx,
        `ferry migrate: ${result.applied.length} applied, ${result.alreadyApplied.length} already applied`,
      );
    }),
  );

  folderOptions(
    program
      .command('check')
      .description("verify ferry's schema (or an application's folder) without changing it"),
  ).action(
    act<FolderOptions>(ctx, async (o) => {
      const folder = checkedFolder(o);
      await ctx.db((db) => checkSchema(db, { ...folder, statementTimeoutMs: ctx.statementTimeoutMs() }));
      if (ctx.json) printJson(ctx, { ready: true });
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
