import { FerryError, INBOX_STATUSES, type InboxRecord, type InboxStatus } from '@ferry/core';
import type { Command } from 'commander';
import { act } from '../act';
import type { Context } from '../command';
import { withJsonTexts } from '../exactJson';
import { printList, printRecord, printStats, timeText, word } from '../output';
import { choice, positiveInt, uuid } from '../parse';
import { checkInboxScope, inboxAdmin, inboxScoped, type ScopeOptions } from '../scope';

export function inboxLine(r: InboxRecord): string {
  return [
    r.id,
    r.status,
    `version=${r.rowVersion}`,
    `consumer=${word(r.consumer)}`,
    `message=${word(r.messageId)}`,
    `tenant=${r.tenantId === null ? '-' : word(r.tenantId)}`,
    `attempts=${r.attempts}/${r.maxAttempts}`,
    `created=${timeText(r.createdAt)}`,
    `error=${r.lastError === null ? '-' : JSON.stringify(r.lastError)}`,
    ...(r.status !== 'PROCESSING' || r.claimToken === null
      ? []
      : [`claim=${r.claimToken}`, `lease=${timeText(r.leaseExpiresAt)}`]),
  ].join(' ');
}

export function registerInboxRead(group: Command, ctx: Context): void {
  inboxScoped(
    group.command('stats').description('receipt counts per status, expired leases, oldest unfinished age'),
  ).action(
    act<ScopeOptions>(ctx, async (o) => {
      checkInboxScope(o);
      const { stats, scope } = await ctx.db(async (db) => {
        const admin = inboxAdmin(ctx, o, db);
        return { stats: await admin.stats(), scope: admin.scope };
      });
      printStats(ctx, {
        kind: 'inbox',
        scope,
        counts: stats.counts,
        total: stats.total,
        expiredLeases: stats.expiredLeases,
        oldestPendingAgeMs: stats.oldestPendingAgeMs,
        estimated: stats.completedEstimated ? ['COMPLETED'] : [],
      });
    }),
  );

  inboxScoped(group.command('list').description('receipts, filtered by status'))
    .option('--status <status>', `one of ${INBOX_STATUSES.join(', ')} (any case)`, choice(INBOX_STATUSES))
    .option('--limit <n>', 'rows per page (default 50)', positiveInt(500))
    .option('--cursor <cursor>', 'continue after the previous page')
    .action(
      act<ScopeOptions & { status?: InboxStatus; limit?: number; cursor?: string }>(ctx, async (o) => {
        checkInboxScope(o);
        // Payloads are printed under --json only: a text listing reads none (a page of large
        // payloads costs it no memory).
        const list = { status: o.status, limit: o.limit, cursor: o.cursor, payload: ctx.json };
        const { answer: page, exact } = await ctx.db((db) =>
          withJsonTexts(
            db,
            ctx.statementTimeoutMs(),
            'inbox',
            (tx) => inboxAdmin(ctx, o, tx).list(list),
            (listed) => listed.records.map((record) => record.id),
            ctx.json,
          ),
        );
        const items = { items: page.records, nextCursor: page.nextCursor };
        printList(ctx, 'inbox list', items, inboxLine, (record) => exact.get(record.id));
      }),
    );

  inboxScoped(
    group.command('show').description('one receipt with every field').argument('<id>', 'receipt id', uuid),
  ).action(
    act<ScopeOptions>(ctx, async (o, [id]) => {
      checkInboxScope(o);
      const { answer: record, exact } = await ctx.db((db) =>
        withJsonTexts(
          db,
          ctx.statementTimeoutMs(),
          'inbox',
          (tx) => inboxAdmin(ctx, o, tx).get(id as string),
          (found) => (found === null ? [] : [found.id]),
        ),
      );
      if (record === null) throw new FerryError('FERRY_NOT_FOUND', `no receipt ${String(id)} in this scope`);
      printRecord(ctx, record, exact.get(record.id));
    }),
  );
}
