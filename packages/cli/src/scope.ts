import {
  createOutboxAdmin,
  InboxAdmin,
  type InboxScopedAdmin,
  type OutboxAdmin,
  type SqlExecutor,
} from '@ferry/core';
import type { Command } from 'commander';
import { actorOf } from './actor';
import type { Context } from './command';
import { UsageError } from './errors';
import { positiveInt } from './parse';

export interface ScopeOptions {
  tenant?: string;
  global?: boolean;
}

export interface MutationOptions {
  dryRun?: boolean;
  actor?: string;
  reason?: string;
  batchSize?: number;
}

export function outboxScoped(command: Command): Command {
  return command.option('--tenant <id>', "only this tenant's events (default: every tenant)");
}

export function inboxScoped(command: Command): Command {
  return command
    .option('--tenant <id>', "this tenant's receipts")
    .option('--global', 'the global (tenant-less) receipts');
}

/** --dry-run, --actor, --reason, --batch-size: every mutating command takes them. */
export function mutating(command: Command, reasonRequired = false): Command {
  return command
    .option('--dry-run', 'show exactly what would change, change nothing (audited as a dry run)')
    .option('--actor <name>', 'who acts, for the audit trail (default FERRY_ACTOR or cli:<user>@<host>)')
    .option(
      '--reason <text>',
      reasonRequired ? 'why (required), for the audit trail' : 'why, for the audit trail',
    )
    .option('--batch-size <n>', 'rows per transaction', positiveInt(1_000), 100);
}

export function outboxAdmin(ctx: Context, options: ScopeOptions, db: SqlExecutor): OutboxAdmin {
  const operator = createOutboxAdmin(db, { statementTimeoutMs: ctx.statementTimeoutMs() });
  return options.tenant === undefined ? operator : operator.forTenant(options.tenant);
}

export function outboxScopeName(options: ScopeOptions): string {
  return options.tenant === undefined ? 'operator' : `tenant:${options.tenant}`;
}

/** Exactly one of --tenant / --global, checked before connecting; there is no cross-tenant inbox access. */
export function checkInboxScope(options: ScopeOptions): void {
  if ((options.tenant === undefined) === (options.global !== true)) {
    throw new UsageError('inbox commands need exactly one of --tenant <id> or --global');
  }
}

export function inboxAdmin(ctx: Context, options: ScopeOptions, db: SqlExecutor): InboxScopedAdmin {
  const admin = new InboxAdmin(db, { statementTimeoutMs: ctx.statementTimeoutMs() });
  return options.tenant === undefined ? admin.forGlobal() : admin.forTenant(options.tenant);
}

export function audit(
  ctx: Context,
  options: MutationOptions,
): { actor: string; reason?: string; dryRun: boolean } {
  return { actor: actorOf(options.actor, ctx.env), reason: options.reason, dryRun: options.dryRun === true };
}
