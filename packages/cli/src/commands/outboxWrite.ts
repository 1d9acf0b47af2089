import type { OutboxStatus } from '@ferry/core';
import type { Command } from 'commander';
import { act } from '../act';
import { chunks, perBatch, releasing, runPurge, runRelease, type ReleaseOptions } from '../bulk';
import type { Context } from '../command';
import { recordOutboxResults } from '../conflict';
import { UsageError } from '../errors';
import { age, cutoff, uuids } from '../parse';
import {
  audit,
  mutating,
  outboxAdmin,
  outboxScoped,
  type MutationOptions,
  type ScopeOptions,
} from '../scope';

type Options = ScopeOptions & MutationOptions;

interface RetryOptions extends Options {
  all?: boolean;
  type?: string;
  key?: string;
  olderThan?: number;
}

/** FAILED ids matching the filter, a page (= one batch) at a time. */
async function* failedPages(ctx: Context, o: RetryOptions): AsyncGenerator<string[]> {
  let cursor: string | undefined;
  const createdBefore = o.olderThan === undefined ? undefined : new Date(Date.now() - o.olderThan);
  do {
    const page = await ctx.db((db) =>
      outboxAdmin(ctx, o, db).list({
        status: 'FAILED' as OutboxStatus,
        type: o.type,
        key: o.key,
        createdBefore,
        limit: o.batchSize,
        cursor,
        payload: false,
      }),
    );
    if (page.items.length > 0) yield page.items.map((r) => r.id);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
}

/** `ids`: each once (the uuids parser). */
async function retry(ctx: Context, o: RetryOptions, ids: string[]): Promise<number> {
  const filtered = o.all === true || o.type !== undefined || o.key !== undefined || o.olderThan !== undefined;
  if (ids.length > 0 === filtered) {
    throw new UsageError('give event ids, or a filter (--all, --type, --key, --older-than), not both');
  }
  const batchSize = o.batchSize as number;
  const total = ids.length > 0 ? ids.length : (await ctx.db((db) => outboxAdmin(ctx, o, db).stats())).failed;
  const batches = ids.length > 0 ? chunks(ids, batchSize) : failedPages(ctx, o);
  const acting = { action: 'outbox retry', dryRun: o.dryRun === true };
  return perBatch(ctx, acting, batches, total, String, 'batch', (batch, record) =>
    ctx.db(async (db) => {
      const admin = outboxAdmin(ctx, o, db);
      await recordOutboxResults(admin, await admin.retryMany(batch, audit(ctx, o)), 'FAILED', record);
    }),
  );
}

export function registerOutboxWrite(group: Command, ctx: Context): void {
  mutating(outboxScoped(group.command('retry')))
    .description('FAILED -> PENDING with fresh retries, by id or by filter; one outcome per id')
    .argument('[ids...]', 'event ids', uuids)
    .option('--all', 'every FAILED event in the scope')
    .option('--type <type>', 'FAILED events of this type')
    .option('--key <key>', 'FAILED events of this ordering key')
    .option('--older-than <age>', 'FAILED events created longer ago than this (15m, 12h, 7d)', age)
    .action(act<RetryOptions>(ctx, (o, [ids]) => retry(ctx, o, (ids as string[] | undefined) ?? [])));

  mutating(outboxScoped(group.command('mark-failed')), true)
    .description('PENDING -> FAILED with last_error = --reason; one outcome per id')
    .argument('<ids...>', 'event ids', uuids)
    .action(
      act<Options>(ctx, async (o, [ids]) => {
        const reason = o.reason;
        if (reason === undefined) throw new UsageError('--reason <text> is required');
        const list = ids as string[];
        // The reason is markFailed's own argument (last_error); its audit options refuse one.
        const { actor, dryRun } = audit(ctx, o);
        const acting = { action: 'outbox mark-failed', dryRun: o.dryRun === true };
        return perBatch(ctx, acting, chunks(list, 1), list.length, String, 'id', ([id], record) =>
          ctx.db(async (db) => {
            const admin = outboxAdmin(ctx, o, db);
            const marked = await admin.markFailed(id as string, reason, { actor, dryRun });
            await recordOutboxResults(admin, [marked], 'PENDING', record);
          }),
        );
      }),
    );

  registerOutboxMaintenance(group, ctx);
}

function registerOutboxMaintenance(group: Command, ctx: Context): void {
  releasing(
    mutating(outboxScoped(group.command('release'))),
    'rows',
    '; a relay still running publishes them again',
  )
    .description(
      'PROCESSING rows of a dead relay back to PENDING (expired leases; --force for a named claim token)',
    )
    .action(
      act<Options & ReleaseOptions>(ctx, (o) =>
        runRelease(ctx, 'outbox release', o, async (limit) => {
          const args = { ...audit(ctx, o), claimToken: o.claimToken, force: o.force, limit };
          return ctx.db((db) => outboxAdmin(ctx, o, db).release(args));
        }),
      ),
    );

  mutating(outboxScoped(group.command('purge-sent')))
    .description('deletes SENT events published before --before, in bounded batches')
    .requiredOption(
      '--before <when>',
      'ISO timestamp, or an age (7d = published more than 7 days ago)',
      cutoff,
    )
    .action(
      act<Options & { before: Date }>(ctx, (o) =>
        runPurge(ctx, 'outbox purge-sent', o, 'deleted', async (limit) => {
          const args = { ...audit(ctx, o), before: o.before, limit };
          return (await ctx.db((db) => outboxAdmin(ctx, o, db).purgeSent(args))).deleted;
        }),
      ),
    );
}
