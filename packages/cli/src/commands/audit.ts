import { createAuditLog, type AuditEntry } from '@ferry/core';
import type { Command } from 'commander';
import { act } from '../act';
import type { Context } from '../command';
import { UsageError } from '../errors';
import { printList, timeText, word } from '../output';
import { instant, positiveInt, uuid } from '../parse';

interface AuditListOptions {
  tenant?: string;
  global?: boolean;
  operator?: boolean;
  action?: string;
  actor?: string;
  id?: string;
  since?: Date;
  limit?: number;
  cursor?: string;
}

export function auditLine(e: AuditEntry): string {
  return [
    e.id,
    timeText(e.at),
    word(e.action),
    e.dryRun ? 'dry-run' : 'applied-run',
    `outcome=${e.outcome}`,
    `actor=${JSON.stringify(e.actor)}`,
    `scope=${word(e.scope)}`,
    `reason=${e.reason === null ? '-' : JSON.stringify(e.reason)}`,
    `ids=${e.ids.length === 0 ? '-' : e.ids.map(word).join(',')}`,
    `results=${JSON.stringify(e.results)}`,
  ].join(' ');
}

/**
 * The trail's scope filter: --tenant as core's `tenantId` (core checks it as every tenant id, a
 * refusal naming --tenant), or a fixed scope.
 */
function scopeOf(o: AuditListOptions): { tenantId?: string; scope?: string } {
  const chosen = [o.tenant !== undefined, o.global === true, o.operator === true].filter(Boolean).length;
  if (chosen > 1) throw new UsageError('give at most one of --tenant, --global, --operator');
  if (o.tenant !== undefined) return { tenantId: o.tenant };
  if (o.global === true) return { scope: 'global' };
  return o.operator === true ? { scope: 'operator' } : {};
}

export function registerAudit(program: Command, ctx: Context): void {
  const group = program.command('audit').description('the operator audit trail (every admin or CLI action)');
  group
    .command('list')
    .description('operator actions, newest first: who, when, scope, what, reason, ids, outcome, dry run')
    .option(
      '--tenant <id>',
      "actions in this tenant's scope (an --operator action on its rows is listed under --operator; --id finds every action on a row)",
    )
    .option('--global', 'actions on global inbox receipts')
    .option('--operator', 'outbox actions across every tenant')
    .option('--action <name>', 'e.g. outbox.retry, inbox.requeue')
    .option('--actor <name>', 'only this actor')
    .option('--id <id>', 'actions that named this record id', uuid)
    .option('--since <when>', 'ISO timestamp, or an age (24h)', instant)
    .option('--limit <n>', 'rows per page (default 50)', positiveInt(1_000))
    .option('--cursor <cursor>', 'continue after the previous page')
    .action(
      act<AuditListOptions>(ctx, async (o) => {
        const scope = scopeOf(o);
        const page = await ctx.db((db) =>
          createAuditLog(db, { statementTimeoutMs: ctx.statementTimeoutMs() }).list({
            ...scope,
            action: o.action,
            actor: o.actor,
            id: o.id,
            since: o.since,
            limit: o.limit,
            cursor: o.cursor,
          }),
        );
        printList(ctx, 'audit list', page, auditLine);
      }),
    );
}
