import { isFerryError } from '../errors';
import { booleanArgument, textArgument, type OptionKeys } from '../optionChecks';
import { redactedText } from '../redact/redact';
import { sessionGone } from '../sql/dbErrors';
import type { SqlExecutor } from '../sql/executor';
import { inRolledBackSavepoint } from '../sql/rolledBackSavepoint';
import { insertAudit, type AuditInsert } from './sql';

/** Who acts and why, for the audit trail; `dryRun` computes the outcome and changes nothing. */
export interface AuditOptions {
  /** Recorded as the actor. Default `admin-api`. */
  readonly actor?: string;
  /** Recorded as the reason. */
  readonly reason?: string;
  /** Run the change, report its outcome, roll it back; the audit row (dry_run true) stays. */
  readonly dryRun?: boolean;
}

/** The keys of AuditOptions: a method taking only them refuses any other (knownKeysArgument). */
export const AUDIT_KEYS = {
  actor: true,
  reason: true,
  dryRun: true,
} as const satisfies OptionKeys<AuditOptions>;

export const DEFAULT_ACTOR = 'admin-api';
const MAX_TEXT = 4_000;

/**
 * A reason as it is stored and audited when an operator may paste a broker's error into it
 * (markFailed's `last_error`, an inbox requeue's history, a replay's reason): redacted with the
 * built-in rules, at most 4,000 characters. The caller's text is checked before (it is what the
 * caller sent); the redacted text may be longer (`x@y.io` is `[redacted-email]`) and is cut, never
 * refused (review 70).
 */
export function redactedReason(reason: string): string {
  return redactedText(reason, MAX_TEXT);
}

export interface AuditedAction<T> {
  /** e.g. `outbox.retry`, `inbox.requeue`. */
  readonly action: string;
  /** `operator`, `tenant:<id>` or `global`. */
  readonly scope: string;
  readonly ids: readonly string[];
  readonly arguments?: Readonly<Record<string, unknown>>;
  /**
   * Checked as given (resolveAudit); its reason is the caller's, before any redaction, and is
   * recorded redacted (redactedReason), whatever the action: an operator may paste a broker's
   * error into any of them (review 134: retry, release and the purges recorded it as given).
   */
  readonly options: AuditOptions | undefined;
  run(tx: SqlExecutor): Promise<T>;
  /** The overall outcome and per-id results; `ids` replaces the ids when only the run knows them (release). */
  summarize(result: T): { outcome: string; results: unknown; ids?: readonly string[] };
}

function optionalText(field: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return textArgument(field, value, MAX_TEXT);
}

/** Checks actor / reason / dryRun before any SQL runs. */
export function resolveAudit(options: AuditOptions | undefined): {
  actor: string;
  reason: string | null;
  dryRun: boolean;
} {
  const dryRun = booleanArgument('dryRun', options?.dryRun) ?? false;
  return {
    actor: optionalText('actor', options?.actor) ?? DEFAULT_ACTOR,
    reason: optionalText('reason', options?.reason),
    dryRun,
  };
}

/** 'applied' when every outcome is applied, 'none' when none is, else 'partial'. */
export function overallOutcome(outcomes: readonly string[]): string {
  const applied = outcomes.filter((o) => o === 'applied').length;
  if (applied === outcomes.length && applied > 0) return 'applied';
  return applied === 0 ? 'none' : 'partial';
}

/**
 * Runs an operator action and writes its audit row in the same transaction (joining the
 * caller's transaction when `db` is one). A dry run runs the change inside a savepoint and
 * rolls it back, so the reported outcome is exactly what would happen; its audit row stays. In
 * the caller's transaction, other ferry calls on it wait meanwhile (inRolledBackSavepoint).
 * When ferry owns the transaction and the action fails, the failure is audited afterwards
 * (outcome `error`) and the error rethrown, unless failureAudited says not.
 */
export async function audited<T>(db: SqlExecutor, action: AuditedAction<T>): Promise<T> {
  const { actor, reason, dryRun } = resolveAudit(action.options);
  // Read once, at the call: on an application's pg client it is the client's status now.
  const joined = db.inTransaction;
  const base = {
    actor,
    reason: reason === null ? null : redactedReason(reason),
    dryRun,
    action: action.action,
    scope: action.scope,
    ids: action.ids,
    arguments: action.arguments ?? {},
  };
  try {
    return await db.transaction(async (tx) => {
      const result = dryRun ? await inRolledBackSavepoint(tx, () => action.run(tx)) : await action.run(tx);
      const summary = action.summarize(result);
      await insertAudit(tx, { ...base, ...summary, ids: summary.ids ?? base.ids });
      return result;
    });
  } catch (error) {
    // The action's error is the answer; a failure to audit the failure must not replace it.
    if (!joined && failureAudited(error)) {
      await insertAudit(db, failureEntry(base, error)).catch(() => undefined);
    }
    throw error;
  }
}

/**
 * The one rule of the `error` row: every failure of an action ferry ran in its own transaction is
 * audited (a refusal by ferry, or by PostgreSQL: a lock timeout, a missing privilege, a deadlock, a
 * read-only standby, a full disk, a missing column), except when the row would lie or has no
 * session to be written on. FERRY_OUTCOME_UNKNOWN: the action's own transaction may have committed
 * with its `applied` row, which an `error` row would contradict. sessionGone (the connection
 * failed, was lost or ended, or none came in time): the write would fail, or wait out a deadline of
 * its own on a database that is not there. A write that fails anyway is swallowed (audited).
 * Review 70: every FERRY_DATABASE_UNAVAILABLE was skipped, lock timeouts and refused privileges
 * included, so those attempts left no trace.
 */
function failureAudited(error: unknown): boolean {
  return !isFerryError(error, 'FERRY_OUTCOME_UNKNOWN') && !sessionGone(error);
}

function failureEntry(base: Omit<AuditInsert, 'outcome' | 'results'>, error: unknown): AuditInsert {
  const code = isFerryError(error) ? error.code : 'UNKNOWN';
  const message = error instanceof Error ? error.message : String(error);
  return { ...base, outcome: 'error', results: { code, message } };
}
