import { FerryConfigError } from '../errors';
import { discardAnswer } from '../unreadAnswer';
import { describeTransportError } from './errors';
import { nonEmptyValue } from './headers';

/**
 * Where an inbound transport takes a message's tenant from (option `tenant` on every consumer):
 * - `'header'` (default): ferry's `x-ferry-tenant-id` header / attribute. Any producer that can
 *   publish to the queue or topic can set it, so it is only as trustworthy as the producers.
 * - `{ fixed: 'acme' }`: every message is that tenant; a tenant header that names another tenant
 *   is dead-lettered as `tenant_mismatch`.
 * - a function: its result is the tenant (null = global); if it throws or returns something
 *   that is not a string or null, the message is dead-lettered as `tenant_unresolved`.
 */
export type TenantSource<M> = 'header' | { readonly fixed: string } | ((message: M) => string | null);

export type TenantResolution =
  | { readonly ok: true; readonly tenantId: string | null }
  | { readonly ok: false; readonly reason: 'tenant_mismatch' | 'tenant_unresolved'; readonly detail: string };

/** Checks the `tenant` option once, at attach time; undefined means `'header'`. */
export function checkTenantSource<M>(source: TenantSource<M> | undefined): TenantSource<M> {
  if (source === undefined || source === 'header' || typeof source === 'function') return source ?? 'header';
  if (typeof source === 'object' && source !== null && typeof source.fixed === 'string') {
    if (source.fixed.length === 0) throw new FerryConfigError('tenant.fixed', 'must be a non-empty string');
    return source;
  }
  throw new FerryConfigError('tenant', "must be 'header', { fixed: string } or a function");
}

/**
 * The tenant of one message. `headerTenant` is the value of ferry's tenant header (absent or
 * empty = undefined); `message` is what a function source receives.
 */
export function resolveTenant<M>(
  source: TenantSource<M>,
  message: M,
  headerTenant: string | undefined,
): TenantResolution {
  if (source === 'header') return { ok: true, tenantId: headerTenant ?? null };
  if (typeof source === 'function') return fromFunction(source, message);
  if (headerTenant !== undefined && headerTenant !== source.fixed) {
    return {
      ok: false,
      reason: 'tenant_mismatch',
      detail: `tenant header ${JSON.stringify(headerTenant.slice(0, 200))} on a consumer fixed to ${JSON.stringify(source.fixed)}`,
    };
  }
  return { ok: true, tenantId: source.fixed };
}

function fromFunction<M>(source: (message: M) => string | null, message: M): TenantResolution {
  let value: unknown;
  try {
    value = source(message);
  } catch (error) {
    return {
      ok: false,
      reason: 'tenant_unresolved',
      detail: `tenant function threw: ${describeTransportError(error)}`,
    };
  }
  if (value === null || value === undefined) return { ok: true, tenantId: null };
  if (typeof value !== 'string') {
    discardAnswer(value);
    return { ok: false, reason: 'tenant_unresolved', detail: `tenant function returned a ${typeof value}` };
  }
  return { ok: true, tenantId: nonEmptyValue(value) ?? null };
}
