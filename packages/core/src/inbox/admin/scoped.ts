import type { SqlExecutor } from '../../sql/executor';
import { InboxNotFoundError, InboxStateConflictError } from '../errors';
import { getReceipt } from '../sql/getReceipt';
import { isUuid } from '../sql/fragments';
import { listReceipts } from '../sql/listReceipts';
import { purgeCompleted } from '../sql/purgeCompleted';
import { requeueDead } from '../sql/requeueDead';
import { readStats, type InboxStats } from '../sql/stats';
import type { InboxRecord, InboxStatus } from '../types';
import { decodeCursor, encodeCursor } from './cursor';
import { replayCompleted, type ReplayOutcome } from './replay';
import {
  LIST_LIMIT,
  optionalStatus,
  PURGE_LIMIT,
  requireLimit,
  requireText,
  requireUuid,
  requireVersion,
} from './validate';
import { FerryValidationError } from '../../errors';

export interface InboxListOptions {
  readonly status?: InboxStatus;
  /** 1..500, default 50. */
  readonly limit?: number;
  readonly cursor?: string;
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
}

export interface InboxReplayInput {
  readonly id: string;
  readonly expectedVersion: number;
  readonly requestId: string;
  readonly targetConsumer: string;
  readonly actor: string;
  readonly reason: string;
}

export interface InboxPurgeInput {
  readonly before: Date;
  /** 1..10,000, default 100. */
  readonly limit?: number;
}

/** Admin operations bound to one scope (a tenant, or the intentional global scope). */
export class InboxScopedAdmin {
  constructor(
    private readonly db: SqlExecutor,
    /** 'tenant:<id>' or 'global'. */
    readonly scope: string,
  ) {}

  async list(options: InboxListOptions = {}): Promise<InboxPage> {
    const status = optionalStatus(options.status);
    const limit = requireLimit('limit', options.limit, LIST_LIMIT);
    const filter = status ?? '*';
    const after = options.cursor === undefined ? null : decodeCursor(options.cursor, filter);
    const rows = await listReceipts(this.db, this.scope, status, after, limit + 1);
    const records = rows.slice(0, limit);
    const last = records[records.length - 1];
    return { records, nextCursor: rows.length > limit && last ? encodeCursor(last.id, filter) : null };
  }

  /** The record, or null when no such id exists in this scope. */
  async get(id: string): Promise<InboxRecord | null> {
    if (!isUuid(id)) return null;
    return getReceipt(this.db, this.scope, id);
  }

  /** DEAD → PENDING. InboxStateConflictError when not DEAD or the version moved on. */
  async requeue(input: InboxRequeueInput): Promise<InboxRecord> {
    const id = requireUuid('id', input.id);
    const expectedVersion = requireVersion(input.expectedVersion);
    const reason = requireText('reason', input.reason);
    const actor = requireText('actor', input.actor);
    const updated = await requeueDead(this.db, this.scope, id, expectedVersion, actor, reason);
    if (updated) return updated;
    const current = await getReceipt(this.db, this.scope, id);
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

  /** Creates (or returns, for a repeated request) a PENDING replay of a COMPLETED record. */
  async replay(input: InboxReplayInput): Promise<ReplayOutcome> {
    return replayCompleted(this.db, {
      scope: this.scope,
      sourceId: requireUuid('id', input.id),
      expectedVersion: requireVersion(input.expectedVersion),
      requestId: requireUuid('requestId', input.requestId).toLowerCase(),
      targetConsumer: requireText('targetConsumer', input.targetConsumer),
      actor: requireText('actor', input.actor),
      reason: requireText('reason', input.reason),
    });
  }

  stats(): Promise<InboxStats> {
    return readStats(this.db, this.scope);
  }

  /** Drops payloads of COMPLETED receipts completed before `before`; returns how many. */
  async purgeCompletedPayload(input: InboxPurgeInput): Promise<{ purged: number }> {
    if (!(input.before instanceof Date) || Number.isNaN(input.before.getTime())) {
      throw new FerryValidationError('before', 'must be a valid Date');
    }
    const limit = requireLimit('limit', input.limit, PURGE_LIMIT);
    return { purged: await purgeCompleted(this.db, this.scope, input.before, limit) };
  }
}
