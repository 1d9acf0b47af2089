import {
  FerryError,
  type OutboxPage,
  type OutboxRecord,
  type OutboxStatus,
  type OutboxSummary,
} from '@ferry/core';
import type { Command } from 'commander';
import { act } from '../act';
import type { Context } from '../command';
import { withJsonTexts } from '../exactJson';
import { printList, printRecord, printStats, timeText, word } from '../output';
import { age, choice, positiveInt, uuid } from '../parse';
import { outboxAdmin, outboxScoped, outboxScopeName, type ScopeOptions } from '../scope';

export const OUTBOX_STATUSES: readonly OutboxStatus[] = ['PENDING', 'PROCESSING', 'SENT', 'FAILED'];

/** One event's line: every field but the payload (a text listing reads none). */
export function outboxLine(r: OutboxRecord | OutboxSummary): string {
  return [
    r.id,
    r.status,
    word(r.type),
    `tenant=${r.tenantId === null ? '-' : word(r.tenantId)}`,
    `key=${r.orderingKey === null ? '-' : word(r.orderingKey)}`,
    `retries=${r.retryCount}/${r.maxRetries}`,
    `created=${timeText(r.createdAt)}`,
    `error=${r.lastError === null ? '-' : JSON.stringify(r.lastError)}`,
    ...(r.status !== 'PROCESSING' || r.claimToken === null
      ? []
      : [`claim=${r.claimToken}`, `lease=${timeText(r.leaseExpiresAt)}`]),
  ].join(' ');
}

interface ListOptions extends ScopeOptions {
  status?: OutboxStatus;
  type?: string;
  key?: string;
  olderThan?: number;
  limit?: number;
  cursor?: string;
}

export function registerOutboxRead(group: Command, ctx: Context): void {
  outboxScoped(
    group.command('stats').description('counts per status, expired leases, oldest pending age'),
  ).action(
    act<ScopeOptions>(ctx, async (options) => {
      const s = await ctx.db((db) => outboxAdmin(ctx, options, db).stats());
      const counts = { PENDING: s.pending, PROCESSING: s.processing, SENT: s.sent, FAILED: s.failed };
      printStats(ctx, {
        kind: 'outbox',
        scope: outboxScopeName(options),
        counts,
        total: s.pending + s.processing + s.sent + s.failed,
        expiredLeases: s.expiredLeases,
        oldestPendingAgeMs: s.oldestPendingAgeMs,
        estimated: s.sentEstimated ? ['SENT'] : [],
      });
    }),
  );

  outboxScoped(group.command('list').description('events, newest first, filtered'))
    .option('--status <status>', `one of ${OUTBOX_STATUSES.join(', ')} (any case)`, choice(OUTBOX_STATUSES))
    .option('--type <type>', 'only this event type')
    .option('--key <key>', 'only this ordering key')
    .option('--older-than <age>', 'only events created longer ago than this (30s, 15m, 12h, 7d)', age)
    .option('--limit <n>', 'rows per page (default 50)', positiveInt(1_000))
    .option('--cursor <cursor>', 'continue after the previous page')
    .action(
      act<ListOptions>(ctx, async (o) => {
        const query = {
          status: o.status,
          type: o.type,
          key: o.key,
          createdBefore: o.olderThan === undefined ? undefined : new Date(Date.now() - o.olderThan),
          limit: o.limit,
          cursor: o.cursor,
        };
        // Payloads are printed under --json only: a text listing reads none (a page of large
        // payloads costs it no memory).
        const { answer: page, exact } = await ctx.db((db) =>
          withJsonTexts(
            db,
            ctx.statementTimeoutMs(),
            'outbox',
            (tx): Promise<OutboxPage<OutboxRecord | OutboxSummary>> =>
              ctx.json
                ? outboxAdmin(ctx, o, tx).list(query)
                : outboxAdmin(ctx, o, tx).list({ ...query, payload: false }),
            (listed) => listed.items.map((item) => item.id),
            ctx.json,
          ),
        );
        printList(ctx, 'outbox list', page, outboxLine, (item) => exact.get(item.id));
      }),
    );

  outboxScoped(
    group.command('show').description('one event with every field').argument('<id>', 'event id', uuid),
  ).action(
    act<ScopeOptions>(ctx, async (options, [id]) => {
      const { answer: record, exact } = await ctx.db((db) =>
        withJsonTexts(
          db,
          ctx.statementTimeoutMs(),
          'outbox',
          (tx) => outboxAdmin(ctx, options, tx).get(id as string),
          (found) => (found === null ? [] : [found.id]),
        ),
      );
      if (record === null) throw new FerryError('FERRY_NOT_FOUND', `no event ${String(id)} in this scope`);
      printRecord(ctx, record, exact.get(record.id));
    }),
  );
}
