import { FerryConfigError } from '../errors';
import { knownKeysOption, oneOfOption, received, type OptionKeys } from '../optionChecks';
import { InboxGlobalScopeRejectedError } from './errors';
import { executorFor, type ApplicationTransaction } from '../sql/applicationTransaction';
import type { PrismaTransactionLike } from '../sql/executor';
import type { InboxHandlerContextWrapper } from './types';

export interface InboxTenancyOptions {
  /** The PostgreSQL setting RLS policies read, e.g. `app.tenant_id` (must contain a dot). */
  readonly setting?: string;
  /**
   * Global (tenant-less) receipts: 'reject' (default) makes them DEAD at once without running
   * the handler (InboxGlobalScopeRejectedError); 'shared' runs them with the setting set to
   * the empty string, for shared tables. Neither bypasses RLS.
   */
  readonly global?: 'reject' | 'shared';
}

const KEYS = { setting: true, global: true } as const satisfies OptionKeys<InboxTenancyOptions>;

export const DEFAULT_TENANT_SETTING = 'app.tenant_id';
const SETTING = /^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*$/i;

const SET = `SELECT set_config($1, $2, true) AS value`;

/**
 * A handler-context wrapper that sets the tenant setting with transaction-local set_config
 * on the handler transaction (context.tx, of any transaction adapter), so RLS policies using
 * current_setting('<setting>', true) apply to the handler's queries. The setting clears at
 * commit or rollback. Global receipts are rejected (DEAD) unless `global: 'shared'`, which
 * sets the empty string.
 */
export function createInboxTenancyContext<TTx extends ApplicationTransaction = PrismaTransactionLike>(
  options: InboxTenancyOptions = {},
): InboxHandlerContextWrapper<TTx> {
  options = knownKeysOption('tenancy.', options, KEYS);
  const setting = options.setting ?? DEFAULT_TENANT_SETTING;
  if (typeof setting !== 'string' || !SETTING.test(setting))
    throw new FerryConfigError(
      'tenancy.setting',
      `must look like \`namespace.name\`, got ${received(setting)}`,
    );
  const global = oneOfOption('tenancy.global', options.global ?? 'reject', ['reject', 'shared'] as const);
  return async (context, next) => {
    if (context.tenantId === null && global === 'reject')
      throw new InboxGlobalScopeRejectedError(context.receiptId);
    await executorFor(context.tx).query(SET, [setting, context.tenantId ?? '']);
    await next();
  };
}
