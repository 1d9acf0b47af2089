import { FerryConfigError, FerryValidationError } from '../../errors';
import { heldExecutor, type ApplicationTransaction } from '../../sql/applicationTransaction';
import type { SqlExecutor } from '../../sql/executor';
import { withTranslation } from '../../sql/dbErrors';
import { knownKeysOption, received, type OptionKeys } from '../../optionChecks';
import {
  adminStatementTimeout,
  statementTimeoutOption,
  withDeadlines,
  type StatementTimeoutOptions,
} from '../../sql/statementDeadline';
import { getReceipt } from '../sql/getReceipt';
import { scopeOf } from '../sql/fragments';
import { readStats, type InboxStats } from '../sql/stats';
import type { InboxRecord } from '../types';
import { assertTenantId } from '../../validate/tenantId';
import { InboxScopedAdmin, listPage, type InboxListOptions, type InboxPage } from './scoped';
import { lookupId, requireTenantId } from './validate';
import { withReadCommittedTransactions, withSerializationRetry } from '../../sql/serializationRetry';

/**
 * Scope-bound operator API. Bind the scope from authenticated context: forTenant(id) sees
 * only that tenant's receipts; forGlobal() only intentional global receipts.
 */
export class InboxAdmin {
  private readonly db: SqlExecutor;
  /**
   * Takes the application's client (Prisma, node-postgres, Kysely) or one of its transactions,
   * to join it, or any SqlExecutor (the CLI passes a node-postgres one); on a node-postgres client
   * whether it is in a transaction is read at each call (heldExecutor). Each audited action
   * runs in one transaction with its audit row; in the caller's transaction it joins it.
   * `statementTimeoutMs` (default 30,000) bounds each statement and each transaction the admin
   * opens; in the caller's transaction the limits are the caller's.
   */
  constructor(client: ApplicationTransaction, options: StatementTimeoutOptions = {}) {
    this.db = adminExecutor(client, adminStatementTimeout(options));
  }

  forTenant(tenantId: string): InboxScopedAdmin {
    // The rule of every tenant id an inbox accepts; scopeOf(record) takes a stored one as it is.
    return new InboxScopedAdmin(this.db, scopeOf(assertTenantId(tenantId)));
  }

  forGlobal(): InboxScopedAdmin {
    return new InboxScopedAdmin(this.db, scopeOf(null));
  }
}

type PrivilegedAdminOptions = StatementTimeoutOptions & { privilegedAdmin?: boolean };
const PRIVILEGED_KEYS = {
  statementTimeoutMs: true,
  privilegedAdmin: true,
} as const satisfies OptionKeys<PrivilegedAdminOptions>;

/**
 * Cross-tenant operator reads. Construction fails (FERRY_CONFIG_INVALID, option
 * `privilegedAdmin`) unless `privilegedAdmin: true` is passed explicitly.
 */
export class InboxPrivilegedAdmin {
  private readonly db: SqlExecutor;
  constructor(client: ApplicationTransaction, options: PrivilegedAdminOptions = {}) {
    // A misspelt key (`statementTimeoutMS`) is refused: ignored, it would leave the default deadline.
    options = knownKeysOption('', options, PRIVILEGED_KEYS);
    if (options.privilegedAdmin !== true) {
      throw new FerryConfigError(
        'privilegedAdmin',
        `cross-tenant admin must be enabled explicitly with true, got ${received(options.privilegedAdmin)}`,
      );
    }
    this.db = adminExecutor(client, statementTimeoutOption('statementTimeoutMs', options.statementTimeoutMs));
  }

  /** Every scope, paged by id. */
  list(options: InboxListOptions = {}): Promise<InboxPage> {
    return listPage(this.db, null, options);
  }

  async get(id: string): Promise<InboxRecord | null> {
    const uuid = lookupId(id);
    return uuid === null ? null : getReceipt(this.db, null, uuid);
  }

  stats(): Promise<InboxStats> {
    return readStats(this.db, null);
  }

  /** Scoped mutations for the record's own scope (requeue, replay, purge). */
  scopeOf(record: Pick<InboxRecord, 'tenantId'>): InboxScopedAdmin {
    // Usually a whole InboxRecord: only its tenantId is read, other keys are not refused.
    if (typeof record !== 'object' || record === null || Array.isArray(record)) {
      throw new FerryValidationError(
        'scopeOf',
        `its argument must be a record with a tenantId, got ${received(record)}`,
      );
    }
    const tenantId = record.tenantId === null ? null : requireTenantId(record.tenantId);
    return new InboxScopedAdmin(this.db, scopeOf(tenantId));
  }
}

/** On a pg client, made again at each call from the client's status (heldExecutor). */
function adminExecutor(client: ApplicationTransaction, timeoutMs: number): SqlExecutor {
  return heldExecutor(client, 'client', (executor) =>
    withTranslation(
      withSerializationRetry(withReadCommittedTransactions(withDeadlines(executor, timeoutMs)), timeoutMs),
      'inbox admin',
    ),
  );
}
