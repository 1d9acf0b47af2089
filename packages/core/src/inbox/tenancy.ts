import { FerryConfigError } from '../errors';
import type { PrismaTransactionLike } from '../sql/executor';
import type { InboxHandlerContextWrapper } from './types';

export interface InboxTenancyOptions {
  /** The PostgreSQL setting RLS policies read, e.g. `app.tenant_id` (must contain a dot). */
  readonly setting?: string;
}

export const DEFAULT_TENANT_SETTING = 'app.tenant_id';
const SETTING = /^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*$/i;

const SET = `SELECT set_config($1, $2, true) AS value`;

/**
 * A handler-context wrapper that sets the tenant setting with transaction-local set_config
 * on the handler transaction (context.tx), so RLS policies using
 * current_setting('<setting>', true) apply to the handler's queries. The setting clears at
 * commit or rollback. Global receipts set the empty string.
 */
export function createInboxTenancyContext<TTx extends PrismaTransactionLike = PrismaTransactionLike>(
  options: InboxTenancyOptions = {},
): InboxHandlerContextWrapper<TTx> {
  const setting = options.setting ?? DEFAULT_TENANT_SETTING;
  if (!SETTING.test(setting))
    throw new FerryConfigError('tenancy.setting', 'must look like `namespace.name`');
  return async (context, next) => {
    await context.tx.$queryRawUnsafe(SET, setting, context.tenantId ?? '');
    await next();
  };
}
