import type { SqlExecutor } from '../../sql/executor';
import { InboxNotFoundError, InboxStateConflictError } from '../errors';
import { getReceipt } from '../sql/getReceipt';
import { listReceipts } from '../sql/listReceipts';
import { purgeCompleted } from '../sql/purgeCompleted';
import { requeueDead } from '../sql/requeueDead';
import { readStats, type InboxStats } from '../sql/stats';
import type { InboxRecord, InboxStatus } from '../types';
import { decodeCursor, encodeCursor } from './cursor';
import { replayCompleted, type InboxReplayOutcome } from './replay';
import {
  LIST_LIMIT,
  lookupId,
  optionalCursor,
  optionalStatus,
  PURGE_LIMIT,
  requireConsumerName,
  requireLimit,
  requireText,
  requireUuid,
  requireVersion,
} from './validate';
import { FerryValidationError } from '../../errors';
import {
  AUDIT_KEYS,
  audited,
  overallOutcome,
  redactedReason,
  resolveAudit,
  type AuditOptions,
} from '../../audit/audited';
import {
  booleanArgument,
  dateArgument,
  knownKeysArgument,
  requiredArgument,
  type OptionKeys,
} from '../../optionChecks';
import { releaseStuckReceipts, type ReleasedReceipts } from '../sql/releaseStuck';

export interface InboxListOptions {
  readonly status?: InboxStatus;
  /** 1..500, default 50. */
  readonly limit?: number;
  readonly cursor?: string;
  /**
   * Read the payloads; default true. `false`: each record's `payload` is null, not read (tell a
   * purged one by `payloadPurgedAt`), for a listing that shows or needs no payload, whose memory
   * then does not grow with the payloads' size (ferry's CLI text listing, `requeue --all`).
   */
  readonly payload?: boolean;
}

export interface InboxPage {
  readonly records: readonly InboxRecord[];
  /** Pass with the same filters to continue; null on the last page. */
  readonly nextCursor: string | null;
}

export interface InboxRequeueInput {
  readonly id: string;
  readonly expectedVersion: number;
  readonly reason: string;
  readonly actor: string;
  /** Report what would change and roll it back (audited as a dry run). */
  readonly dryRun?: boolean;
}

export interface InboxReplayInput {
  readonly id: string;
  readonly expectedVersion: number;
  readonly requestId: string;
  readonly targetConsumer: string;
  readonly actor: string;
  readonly reason: string;
  readonly dryRun?: boolean;
}

export interface InboxPurgeInput extends AuditOptions {
  readonly before: Date;
  /** 1..10,000, default 100. */
  readonly limit?: number;
}

export interface InboxReleaseInput extends AuditOptions {
  /** Only this claim token's receipts; required with `force`. */
  readonly claimToken?: string;
  /**
   * Release the token's receipts before their lease expires (the worker is known dead). A
   * receipt whose handler transaction is still alive is not released (answered as `running`).
   */
  readonly force?: boolean;
  /** 1..10,000, default 100. */
  readonly limit?: number;
}

export const LIST_KEYS = {
  status: true,
  limit: true,
  cursor: true,
  payload: true,
} as const satisfies OptionKeys<InboxListOptions>;
const REQUEUE_KEYS = {
  ...AUDIT_KEYS,
  id: true,
  expectedVersion: true,
} as const satisfies OptionKeys<InboxRequeueInput>;
const REPLAY_KEYS = {
  ...AUDIT_KEYS,
  id: true,
  expectedVersion: true,
  requestId: true,
  targetConsumer: true,
} as const satisfies OptionKeys<InboxReplayInput>;
const PURGE_KEYS = {
  ...AUDIT_KEYS,
  before: true,
  limit: true,
} as const satisfies OptionKeys<InboxPurgeInput>;
const RELEASE_KEYS = {
  ...AUDIT_KEYS,
  claimToken: true,
  force: true,
  limit: true,
} as const satisfies OptionKeys<InboxReleaseInput>;

/** A page of the receipts of `scope` (null: every scope), as `list(options)` answers it. */
export async function listPage(
  db: SqlExecutor,
  scope: string | null,
  options: InboxListOptions,
): Promise<InboxPage> {
  knownKeysArgument('list', options, LIST_KEYS);
  const status = optionalStatus(options.status);
  const limit = requireLimit('limit', options.limit, LIST_LIMIT);
  const cursor = optionalCursor(options.cursor);
  const after = cursor === undefined ? null : decodeCursor(cursor, scope, status);
  const payload = booleanArgument('payload', options.payload) ?? true;
  const rows = await listReceipts(db, scope, status, after, limit + 1, payload);
  const records = rows.slice(0, limit);
  const last = records[records.length - 1];
  return { records, nextCursor: rows.length > limit && last ? encodeCursor(last.id, scope, status) : null };
}

/** Admin operations bound to one scope (a tenant, or the intentional global scope). */
export class InboxScopedAdmin {
  constructor(
    private readonly db: SqlExecutor,
    /** 'tenant:<id>' or 'global'. */
    readonly scope: string,
  ) {}

  list(options: InboxListOptions = {}): Promise<InboxPage> {
    return listPage(this.db, this.scope, options);
  }

  /** The record, or null when no such id exists in this scope. */
  async get(id: string): Promise<InboxRecord | null> {
    const uuid = lookupId(id);
    return uuid === null ? null : getReceipt(this.db, this.scope, uuid);
  }

  /**
   * DEAD → PENDING. InboxStateConflictError when not DEAD or the version moved on. Appends the
   * requeue to the record's requeueHistory, which keeps the last INBOX_REQUEUE_HISTORY_LIMIT (10)
   * entries, each numbered (`sequence`); `requeueHistoryDropped` counts the older ones dropped
   * (every requeue keeps its audit row).
   */
  async requeue(input: InboxRequeueInput): Promise<InboxRecord> {
    requiredArgument('requeue', input, REQUEUE_KEYS);
    const id = requireUuid('id', input.id);
    const expectedVersion = requireVersion(input.expectedVersion);
    // Checked as given, then stored (requeue history) and audited redacted, as the outbox's
    // markFailed: an operator may paste a broker's error (redactedReason).
    const given = requireText('reason', input.reason);
    const reason = redactedReason(given);
    const actor = requireText('actor', input.actor);
    return audited(this.db, {
      action: 'inbox.requeue',
      scope: this.scope,
      ids: [id],
      arguments: { expectedVersion },
      options: { actor, reason: given, dryRun: input.dryRun },
      run: (tx) => requeueAt(tx, this.scope, id, expectedVersion, actor, reason),
      summarize: (r) => ({
        outcome: 'applied',
        results: [{ id, outcome: 'applied', status: r.status, rowVersion: r.rowVersion }],
      }),
    });
  }

  /** Creates (or returns, for a repeated request) a PENDING replay of a COMPLETED record. */
  async replay(input: InboxReplayInput): Promise<InboxReplayOutcome> {
    requiredArgument('replay', input, REPLAY_KEYS);
    const given = {
      scope: this.scope,
      // Lower case, as the request id and as PostgreSQL prints it: a repeated request compares
      // them (replay.ts), and one in another letter case names the same record (review 35).
      sourceId: requireUuid('id', input.id).toLowerCase(),
      expectedVersion: requireVersion(input.expectedVersion),
      requestId: requireUuid('requestId', input.requestId).toLowerCase(),
      targetConsumer: requireConsumerName('targetConsumer', input.targetConsumer),
      actor: requireText('actor', input.actor),
      reason: requireText('reason', input.reason),
    };
    // Checked as given, then stored (replay lineage) and audited redacted, as requeue's.
    const request = { ...given, reason: redactedReason(given.reason) };
    return audited(this.db, {
      action: 'inbox.replay',
      scope: this.scope,
      ids: [request.sourceId],
      arguments: {
        expectedVersion: request.expectedVersion,
        requestId: request.requestId,
        targetConsumer: request.targetConsumer,
      },
      options: { actor: request.actor, reason: given.reason, dryRun: input.dryRun },
      run: (tx) => replayCompleted(tx, request),
      summarize: (r) => ({
        outcome: r.kind === 'accepted' ? 'applied' : 'none',
        results: [{ id: request.sourceId, outcome: r.kind, replayId: r.record.id }],
      }),
    });
  }

  stats(): Promise<InboxStats> {
    return readStats(this.db, this.scope);
  }

  /**
   * Hands claims of a dead worker back: PROCESSING receipts whose lease expired, or with
   * `force` every receipt of `claimToken`, go to PENDING and get their attempt back. A forced
   * release leaves a receipt whose handler transaction is alive untouched and lists it under
   * `running`: admin operations never cancel a running handler.
   */
  async release(input: InboxReleaseInput = {}): Promise<ReleasedReceipts> {
    knownKeysArgument('release', input, RELEASE_KEYS);
    const claimToken = input.claimToken === undefined ? null : requireUuid('claimToken', input.claimToken);
    const force = booleanArgument('force', input.force) ?? false;
    if (force && claimToken === null) {
      throw new FerryValidationError('force', 'needs claimToken: only a named dead claim is released early');
    }
    const limit = requireLimit('limit', input.limit, PURGE_LIMIT);
    // A dry run takes no lock (releaseStuck's PREVIEW_SQL): it must not disturb a live handler.
    const { dryRun } = resolveAudit(input);
    return audited(this.db, {
      action: 'inbox.release',
      scope: this.scope,
      ids: [],
      arguments: { claimToken, force, limit },
      options: input,
      run: (tx) => releaseStuckReceipts(tx, { scope: this.scope, claimToken, force, limit, dryRun }),
      // Every candidate is a target: `partial` when some were left running, as a per-id action's.
      summarize: (r) => ({
        outcome: overallOutcome([...r.released.map(() => 'applied'), ...r.running.map(() => 'running')]),
        results: { released: r.released, running: r.running },
        ids: [...r.released, ...r.running],
      }),
    });
  }

  /** Drops payloads of COMPLETED receipts completed before `before`; returns how many. */
  async purgeCompletedPayload(input: InboxPurgeInput): Promise<{ purged: number }> {
    requiredArgument('purgeCompletedPayload', input, PURGE_KEYS);
    const before = dateArgument('before', input.before);
    const limit = requireLimit('limit', input.limit, PURGE_LIMIT);
    return audited(this.db, {
      action: 'inbox.purge-payloads',
      scope: this.scope,
      ids: [],
      arguments: { before: before.toISOString(), limit },
      options: input,
      run: async (tx) => ({ purged: await purgeCompleted(tx, this.scope, before, limit) }),
      summarize: (r) => ({ outcome: r.purged > 0 ? 'applied' : 'none', results: r }),
    });
  }
}

/** DEAD -> PENDING at the observed version, or the error saying why not. */
async function requeueAt(
  db: SqlExecutor,
  scope: string,
  id: string,
  expectedVersion: number,
  actor: string,
  reason: string,
): Promise<InboxRecord> {
  const updated = await requeueDead(db, scope, id, expectedVersion, actor, reason);
  if (updated) return updated;
  const current = await getReceipt(db, scope, id);
  if (!current) throw new InboxNotFoundError(id);
  const actual = { status: current.status, rowVersion: current.rowVersion };
  if (current.status !== 'DEAD')
    throw new InboxStateConflictError(id, `requeue requires DEAD, found ${current.status}`, actual);
  throw new InboxStateConflictError(
    id,
    `expected version ${expectedVersion}, found ${current.rowVersion}`,
    actual,
  );
}
