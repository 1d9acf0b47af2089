import { randomUUID } from 'node:crypto';
import { InboxStateConflictError, isFerryError, type InboxScopedAdmin } from '@ferry/core';
import type { Command } from 'commander';
import { act } from '../act';
import { chunks, perBatch, releasing, runPurge, runRelease, type ReleaseOptions } from '../bulk';
import type { Context } from '../command';
import { explainedReplayFailure, inboxConflictDetail } from '../conflict';
import { UsageError } from '../errors';
import { FailedPartway } from '../failure';
import { AUDIT_HINT, stopNotes, untilInterrupted } from '../interrupt';
import { countOutcomes, printActions, printNote, type ActionResult } from '../output';
import { cutoff, rowVersion, uuid, versionedId, type VersionedId } from '../parse';
import {
  audit,
  checkInboxScope,
  inboxAdmin,
  inboxScoped,
  mutating,
  type MutationOptions,
  type ScopeOptions,
} from '../scope';

type Options = ScopeOptions & MutationOptions;

/** Where to look after a second signal ended a replay unanswered, and how to retry it as the same request. */
const REPLAY_HINT = (requestId: string): string =>
  `${AUDIT_HINT}; request id ${requestId}: retry with --request-id ${requestId} (a duplicate if it landed)`;

interface Target {
  readonly id: string;
  readonly version: number;
}

interface RequeueOptions extends Options {
  expectedVersion?: number;
  all?: boolean;
}

/** Per-id outcome of a requeue: applied, not_found or conflict (moved on since listed). */
async function requeueOne(
  admin: InboxScopedAdmin,
  target: Target,
  a: ReturnType<typeof audit>,
  reason: string,
): Promise<ActionResult> {
  try {
    const r = await admin.requeue({
      id: target.id,
      expectedVersion: target.version,
      actor: a.actor,
      reason,
      dryRun: a.dryRun,
    });
    return { id: target.id, outcome: 'applied', status: r.status, rowVersion: r.rowVersion };
  } catch (error) {
    if (isFerryError(error, 'FERRY_NOT_FOUND')) return { id: target.id, outcome: 'not_found' };
    if (error instanceof InboxStateConflictError) {
      const detail = inboxConflictDetail(error, { status: 'DEAD', version: target.version });
      return { id: target.id, outcome: 'conflict', detail };
    }
    throw error;
  }
}

/** DEAD receipts of the scope at their listed versions, a page at a time. */
async function* deadPages(ctx: Context, o: RequeueOptions): AsyncGenerator<Array<Target>> {
  let cursor: string | undefined;
  do {
    const page = await ctx.db((db) =>
      inboxAdmin(ctx, o, db).list({
        status: 'DEAD',
        limit: Math.min(o.batchSize as number, 500),
        cursor,
        payload: false,
      }),
    );
    if (page.records.length > 0) yield page.records.map((r) => ({ id: r.id, version: r.rowVersion }));
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
}

function explicitTargets(targets: VersionedId[], expectedVersion: number | undefined): Array<Target> {
  if (expectedVersion !== undefined && targets.length !== 1) {
    throw new UsageError('--expected-version goes with exactly one id; give several as <id>:<version>');
  }
  return targets.map((t) => {
    // <id>:3 --expected-version 4: which one was observed? (as <id>:3 <id>:4 is refused)
    if (t.version !== null && expectedVersion !== undefined && t.version !== expectedVersion) {
      throw new UsageError(
        `${t.id} is given at version ${t.version} and --expected-version ${expectedVersion}: give the one you observed`,
      );
    }
    const version = t.version ?? expectedVersion;
    if (version === undefined || version === null) {
      throw new UsageError(`${t.id} needs the version you observed: <id>:<version> or --expected-version N`);
    }
    return { id: t.id, version };
  });
}

async function requeue(ctx: Context, o: RequeueOptions, targets: VersionedId[]): Promise<number> {
  checkInboxScope(o);
  if (targets.length > 0 === (o.all === true))
    throw new UsageError('give receipt ids, or --all (every DEAD receipt), not both');
  const reason = o.reason;
  if (reason === undefined) throw new UsageError('--reason <text> is required');
  const explicit = explicitTargets(targets, o.expectedVersion);
  const total =
    explicit.length > 0
      ? explicit.length
      : (await ctx.db((db) => inboxAdmin(ctx, o, db).stats())).counts.DEAD;
  const batches = explicit.length > 0 ? chunks(explicit, o.batchSize as number) : deadPages(ctx, o);
  const a = audit(ctx, o);
  const acting = { action: 'inbox requeue', dryRun: a.dryRun };
  const idOf = (target: Target): string => target.id;
  return perBatch(ctx, acting, batches, total, idOf, 'id', (batch, record, stop) =>
    ctx.db(async (db) => {
      const admin = inboxAdmin(ctx, o, db);
      // Each id is its own audited transaction: recorded as soon as it committed; after a signal
      // the one in flight finishes and no other starts.
      for (const target of batch) {
        if (stop.aborted) return;
        record(await requeueOne(admin, target, a, reason));
      }
    }),
  );
}

export function registerInboxWrite(group: Command, ctx: Context): void {
  mutating(inboxScoped(group.command('requeue')), true)
    .description('DEAD -> PENDING at the version you observed (ids) or at the listed versions (--all)')
    .argument('[ids...]', 'receipt ids, each as <id> or <id>:<version>', versionedId)
    .option('--expected-version <n>', 'the version observed, for a single id', rowVersion)
    .option('--all', 'every DEAD receipt in the scope, each at its listed version')
    .action(
      act<RequeueOptions>(ctx, (o, [ids]) => requeue(ctx, o, (ids as VersionedId[] | undefined) ?? [])),
    );

  registerReplay(group, ctx);
  registerInboxMaintenance(group, ctx);
}

function registerReplay(group: Command, ctx: Context): void {
  mutating(inboxScoped(group.command('replay')), true)
    .description(
      'a new PENDING copy of a COMPLETED receipt for --target-consumer (idempotent by --request-id)',
    )
    .argument('<id>', 'the COMPLETED receipt', uuid)
    .requiredOption('--expected-version <n>', 'the version observed', rowVersion)
    .requiredOption('--target-consumer <name>', 'the consumer that handles the copy')
    .option('--request-id <uuid>', 'makes a repeated replay a duplicate (default: a new one)', uuid)
    .action(
      act<Options & { expectedVersion: number; targetConsumer: string; requestId?: string }>(
        ctx,
        async (o, [id]) => {
          checkInboxScope(o);
          if (o.reason === undefined) throw new UsageError('--reason <text> is required');
          const a = audit(ctx, o);
          // Made up once per invocation when not given; every answer names it, a failed one too,
          // so a timed-out replay can be retried as the same request (a duplicate, not a copy).
          const requestId = o.requestId ?? randomUUID();
          // One change: a first signal lets it finish and answers it (the usual exit: nothing was
          // left), a second exits at once (untilInterrupted).
          const notes = stopNotes((line) => printNote(ctx, line), 'inbox replay', REPLAY_HINT(requestId));
          return untilInterrupted(async () => {
            let outcome: Awaited<ReturnType<InboxScopedAdmin['replay']>>;
            try {
              outcome = await ctx.db((db) =>
                inboxAdmin(ctx, o, db).replay({
                  id: id as string,
                  expectedVersion: o.expectedVersion,
                  requestId,
                  targetConsumer: o.targetConsumer,
                  actor: a.actor,
                  reason: o.reason as string,
                  dryRun: a.dryRun,
                }),
              );
            } catch (error) {
              throw new FailedPartway(explainedReplayFailure(error, o.expectedVersion), { requestId });
            }
            const results = [
              { id: id as string, outcome: outcome.kind, replayId: outcome.record.id, requestId },
            ];
            return printActions(ctx, {
              action: 'inbox replay',
              dryRun: a.dryRun,
              results,
              counts: countOutcomes(results),
            });
          }, notes);
        },
      ),
    );
}

function registerInboxMaintenance(group: Command, ctx: Context): void {
  releasing(
    mutating(inboxScoped(group.command('release'))),
    'receipts',
    '; a receipt whose handler is still running is left alone (outcome running)',
  )
    .description('PROCESSING receipts of a dead worker back to PENDING with their attempt given back')
    .action(
      act<Options & ReleaseOptions>(ctx, (o) => {
        checkInboxScope(o);
        return runRelease(ctx, 'inbox release', o, async (limit) => {
          const args = { ...audit(ctx, o), claimToken: o.claimToken, force: o.force, limit };
          return ctx.db((db) => inboxAdmin(ctx, o, db).release(args));
        });
      }),
    );

  mutating(inboxScoped(group.command('purge-payloads')))
    .description(
      'drops the payloads of COMPLETED receipts completed before --before (identity and fingerprint stay)',
    )
    .requiredOption(
      '--before <when>',
      'ISO timestamp, or an age (30d = completed more than 30 days ago)',
      cutoff,
    )
    .action(
      act<Options & { before: Date }>(ctx, (o) => {
        checkInboxScope(o);
        return runPurge(ctx, 'inbox purge-payloads', o, 'purged', async (limit) => {
          const args = { ...audit(ctx, o), before: o.before, limit };
          return (await ctx.db((db) => inboxAdmin(ctx, o, db).purgeCompletedPayload(args))).purged;
        });
      }),
    );
}
