import {
  createOutboxAdmin,
  InboxAdmin,
  type InboxScopedAdmin,
  type OutboxAdmin,
  type SqlExecutor,
} from '@ferry/core';
import type { ParsedArgs } from './args';
import { optionalFlag, UsageError } from './usage';

/** Validated before connecting: --tenant T, else the operator (every tenant) scope. */
export function outboxScope(args: ParsedArgs): (db: SqlExecutor) => OutboxAdmin {
  if (args.flags.global !== undefined) throw new UsageError('outbox commands take --tenant, not --global');
  const tenant = optionalFlag(args, 'tenant');
  return (db) => {
    const operator = createOutboxAdmin(db);
    return tenant === undefined ? operator : operator.forTenant(tenant);
  };
}

/**
 * Validated before connecting: exactly one of --tenant T / --global; the CLI never opens the
 * cross-tenant inbox admin. InboxAdmin only needs raw queries, which the pg executor's client has.
 */
export function inboxScope(args: ParsedArgs): (db: SqlExecutor) => InboxScopedAdmin {
  const tenant = optionalFlag(args, 'tenant');
  const global = args.flags.global !== undefined;
  if ((tenant === undefined) === !global)
    throw new UsageError('inbox commands need exactly one of --tenant <id> or --global');
  return (db) => {
    const admin = new InboxAdmin(db.client);
    return tenant === undefined ? admin.forGlobal() : admin.forTenant(tenant);
  };
}
