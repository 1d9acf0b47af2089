import { isFerryError } from '../errors';
import { booleanArgument, textArgument, type OptionKeys } from '../optionChecks';
import type { SqlExecutor } from '../sql/executor';
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

export interface AuditedAction<T> {
  /** e.g. `outbox.retry`, `inbox.requeue`. */
  readonly action: string;
  /** `operator`, `tenant:<id>` or `global`. */
  readonly scope: string;
  readonly ids: readonly string[];
  readonly arguments?: Readonly<Record<string, unknown>>;
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
 * rolls it back, so the reported outcome is exactly what would happen; its audit row stays.
 * When ferry owns the transaction and the action fails, the failure is audited afterwards
 * (outcome `error`) and the error rethrown; not when its outcome is unknown (FERRY_OUTCOME_UNKNOWN:
 * its COMMIT was sent and may have landed, audit row included).
 */
export async function audited<T>(db: SqlExecutor, action: AuditedAction<T>): Promise<T> {
  const { actor, reason, dryRun } = resolveAudit(action.options);
  const base = {
    actor,
    reason,
    dryRun,
    action: action.action,
    scope: action.scope,
    ids: action.ids,
    arguments: action.arguments ?? {},
  };
  try {
    return await db.transaction(async (tx) => {
      const result = dryRun ? await inSavepoint(tx, () => action.run(tx)) : await action.run(tx);
      const summary = action.summarize(result);
      await insertAudit(tx, { ...base, ...summary, ids: summary.ids ?? base.ids });
      return result;
    });
  } catch (error) {
    // The action's error is the answer; a failure to audit the failure must not replace it.
    if (!db.inTransaction && !isUnreachable(error)) {
      await insertAudit(db, failureEntry(base, error)).catch(() => undefined);
    }
    throw error;
  }
}

async function inSavepoint<T>(tx: SqlExecutor, work: () => Promise<T>): Promise<T> {
  await tx.execute('SAVEPOINT ferry_dry_run');
  try {
    return await work();
  } finally {
    await tx.execute('ROLLBACK TO SAVEPOINT ferry_dry_run');
  }
}

/**
 * No failure row: the database cannot take it, or (FERRY_OUTCOME_UNKNOWN) the action's own
 * transaction may have committed with its audit row, which an `error` row would contradict.
 */
function isUnreachable(error: unknown): boolean {
  return (
    isFerryError(error, 'FERRY_SCHEMA_NOT_READY') ||
    isFerryError(error, 'FERRY_DATABASE_UNAVAILABLE') ||
    isFerryError(error, 'FERRY_OUTCOME_UNKNOWN')
  );
}

function failureEntry(base: Omit<AuditInsert, 'outcome' | 'results'>, error: unknown): AuditInsert {
  const code = isFerryError(error) ? error.code : 'UNKNOWN';
  const message = error instanceof Error ? error.message : String(error);
  return { ...base, outcome: 'error', results: { code, message } };
}
