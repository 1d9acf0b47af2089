import {
  AUDIT_KEYS,
  audited,
  overallOutcome,
  redactedReason,
  resolveAudit,
  type AuditOptions,
} from '../audit/audited';
import {
  booleanArgument,
  dateArgument,
  integerArgument,
  knownKeysArgument,
  requiredArgument,
  textArgument,
  uuidArgument,
  type OptionKeys,
} from '../optionChecks';
import { FerryValidationError } from '../errors';
import { withTranslation } from '../sql/dbErrors';
import type { SqlExecutor } from '../sql/executor';
import type { AdminResult, PurgeSentArgs, ReleaseArgs, ReleaseResult } from './adminTypes';
import { purgeSentEvents } from './sql/adminQueries';
import { markEventsFailed, retryEvents, type AdminOutcome } from './sql/adminTransition';
import { releaseStuckEvents } from './sql/releaseStuck';

const RELEASE_KEYS = {
  ...AUDIT_KEYS,
  claimToken: true,
  force: true,
  limit: true,
} as const satisfies OptionKeys<ReleaseArgs>;
const PURGE_SENT_KEYS = {
  ...AUDIT_KEYS,
  before: true,
  limit: true,
} as const satisfies OptionKeys<PurgeSentArgs>;

/** The audited outbox mutations of one scope (`tenantId` null: every tenant). */
export class OutboxActions {
  private readonly db: SqlExecutor;
  private readonly scope: string;
  constructor(
    db: SqlExecutor,
    private readonly tenantId: string | null,
  ) {
    this.db = withTranslation(db, 'outbox admin');
    this.scope = tenantId === null ? 'operator' : `tenant:${tenantId}`;
  }

  /**
   * `ids` checked by the caller (admin.ts: a UUID each). An id given more than once (in any case)
   * is retried, answered and audited once, at its first place: one transition, one result.
   */
  async retry(ids: readonly string[], audit: AuditOptions | undefined): Promise<AdminResult[]> {
    const seen = new Set<string>();
    const distinct = ids.filter((id) => !seen.has(id.toLowerCase()) && seen.add(id.toLowerCase()));
    return this.perId('outbox.retry', distinct, audit, (tx) => retryEvents(tx, distinct, this.tenantId));
  }

  /** `audit` checked by the caller (admin.ts: actor and dryRun only; the reason is `reason`). */
  async markFailed(
    id: string,
    reason: string,
    audit: Omit<AuditOptions, 'reason'> | undefined,
  ): Promise<AdminResult> {
    uuidArgument('id', id);
    // Checked as the caller sent it: 1 to 4,000 characters.
    textArgument('reason', reason, 4_000);
    // Stored as last_error, which is redacted wherever it is written: an operator may paste the
    // broker's error. The admin has no redact option; the built-in rules apply. Redaction may
    // lengthen it: the redacted text is cut at 4,000, as the relay's errors are (redactedReason).
    const redacted = redactedReason(reason);
    return this.perId('outbox.mark-failed', [id], { ...audit, reason }, (tx) =>
      markEventsFailed(tx, [id], this.tenantId, redacted),
    ).then(([result]) => result as AdminResult);
  }

  async release(args: ReleaseArgs): Promise<ReleaseResult> {
    knownKeysArgument('release', args, RELEASE_KEYS);
    const claimToken = args.claimToken === undefined ? null : uuidArgument('claimToken', args.claimToken);
    const force = booleanArgument('force', args.force) ?? false;
    if (force && claimToken === null) {
      throw new FerryValidationError('force', 'needs claimToken: only a named dead claim is released early');
    }
    const limit = integerArgument('limit', args.limit, 1, 10_000, 1_000);
    // A dry run takes no lock (releaseStuck's PREVIEW): it must not hold up a live relay.
    const { dryRun } = resolveAudit(args);
    return audited(this.db, {
      action: 'outbox.release',
      scope: this.scope,
      ids: [],
      arguments: { claimToken, force, limit },
      options: args,
      run: async (tx) => ({
        released: await releaseStuckEvents(tx, { tenantId: this.tenantId, claimToken, force, limit, dryRun }),
      }),
      summarize: (r) => ({
        outcome: r.released.length > 0 ? 'applied' : 'none',
        results: { released: r.released },
        ids: r.released,
      }),
    });
  }

  async purgeSent(args: PurgeSentArgs): Promise<{ deleted: number }> {
    requiredArgument('purgeSent', args, PURGE_SENT_KEYS);
    const before = dateArgument('before', args.before);
    const limit = integerArgument('limit', args.limit, 1, 10_000, 1_000);
    return audited(this.db, {
      action: 'outbox.purge-sent',
      scope: this.scope,
      ids: [],
      arguments: { before: before.toISOString(), limit },
      options: args,
      run: async (tx) => ({
        deleted: await purgeSentEvents(tx, { tenantId: this.tenantId, before, limit }),
      }),
      summarize: (r) => ({ outcome: r.deleted > 0 ? 'applied' : 'none', results: r }),
    });
  }

  private perId(
    action: string,
    ids: readonly string[],
    audit: AuditOptions | undefined,
    run: (tx: SqlExecutor) => Promise<Map<string, AdminOutcome>>,
  ): Promise<AdminResult[]> {
    return audited(this.db, {
      action,
      scope: this.scope,
      ids,
      options: audit,
      run: async (tx) => {
        const outcomes = await run(tx);
        return ids.map((id) => ({ id, outcome: outcomes.get(id.toLowerCase()) ?? 'not_found' }));
      },
      summarize: (results) => ({ outcome: overallOutcome(results.map((r) => r.outcome)), results }),
    });
  }
}
