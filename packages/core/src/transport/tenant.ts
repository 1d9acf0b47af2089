import { FerryConfigError } from '../errors';
import { discardAnswer } from '../unreadAnswer';
import { tenantIdFault } from '../validate/tenantId';
import { identifierFault } from '../validate/text';
import { describeTransportError } from './errors';
import { FERRY_HEADERS } from '../contracts';

/**
 * Where an inbound transport takes a message's tenant from (option `tenant` on every consumer):
 * - `'header'` (default): ferry's `x-ferry-tenant-id` header / attribute. Any producer that can
 *   publish to the queue or topic can set it, so it is only as trustworthy as the producers.
 * - `{ fixed: 'acme' }`: every message is that tenant; a tenant header that names another tenant
 *   is dead-lettered as `tenant_mismatch`.
 * - a function: its result is the tenant (null or undefined = global); if it throws, returns
 *   something that is not a string or null, or a string that names no tenant (the empty string
 *   too), the message is dead-lettered as `tenant_unresolved`.
 */
export type TenantSource<M> = 'header' | { readonly fixed: string } | ((message: M) => string | null);

export type TenantResolution =
  | { readonly ok: true; readonly tenantId: string | null }
  | { readonly ok: false; readonly reason: 'tenant_mismatch' | 'tenant_unresolved'; readonly detail: string };

/**
 * Checks the `tenant` option once, at attach time; undefined means `'header'`. A fixed tenant is
 * held to the rule acceptance applies to a tenant id (tenantIdFault: length, identifierFault,
 * textFault): one acceptance refuses would have every message of the consumer dead-lettered.
 */
export function checkTenantSource<M>(source: TenantSource<M> | undefined): TenantSource<M> {
  if (source === undefined || source === 'header' || typeof source === 'function') return source ?? 'header';
  if (typeof source === 'object' && source !== null && typeof source.fixed === 'string') {
    const fault = tenantIdFault(source.fixed);
    if (fault !== null) throw new FerryConfigError('tenant.fixed', fault.reason);
    return source;
  }
  throw new FerryConfigError('tenant', "must be 'header', { fixed: string } or a function");
}

/**
 * The tenant of one message. `headerTenant` is the value of ferry's tenant header (absent or
 * empty = undefined); `message` is what a function source receives. A tenant from the header or
 * the function that shows nothing or holds a control character or line break (identifierFault, the rule
 * of message ids) names no tenant: `tenant_unresolved`.
 */
export function resolveTenant<M>(
  source: TenantSource<M>,
  message: M,
  headerTenant: string | undefined,
): TenantResolution {
  if (source === 'header') return named({ ok: true, tenantId: headerTenant ?? null });
  if (typeof source === 'function') return named(fromFunction(source, message));
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
  // Only null (or undefined) chooses the global scope; '' is refused by named() as any tenant
  // that shows nothing (review 43: a routing key `.order.created` put work in the global scope).
  return { ok: true, tenantId: value };
}

function named(resolution: TenantResolution): TenantResolution {
  if (!resolution.ok || resolution.tenantId === null) return resolution;
  const fault = identifierFault(resolution.tenantId);
  if (fault === null) return resolution;
  const tenant = JSON.stringify(resolution.tenantId.slice(0, 64));
  return { ok: false, reason: 'tenant_unresolved', detail: `tenant ${tenant} ${fault}` };
}

/**
 * What a dead-letter copy carries as ferry's `x-ferry-tenant-id`: a tenant (the header set to
 * it), null (no tenant: the header left out), or undefined (the message's own header as it came).
 */
export type DeadLetterTenant = string | null | undefined;

/**
 * The tenant a dead-letter copy must carry. A ferry consumer draining the dead-letter queue or
 * topic reads the tenant from that header (the default source): a copy without it went to the
 * global scope, and the copy of a `tenant_mismatch` to the tenant a producer forged. So the copy
 * carries the tenant ferry's source gives the message: a fixed source's tenant, whatever the
 * header said (a `tenant_mismatch` detail quotes it) and however early the message was refused;
 * a function's decision once it made one (`resolved`: the resolution's tenant, null for the
 * global scope, undefined when it did not run or refused), the global scope included: its copy
 * carries no tenant header, not the one the message came with, which the function overruled
 * (review 97). A header source leaves the header as it came.
 */
export function deadLetterTenant<M>(
  source: TenantSource<M>,
  resolved: string | null | undefined,
): DeadLetterTenant {
  if (typeof source === 'object') return source.fixed;
  if (typeof source === 'function') return resolved;
  return undefined;
}

/**
 * `headers` (a message's own, copied) without ferry's tenant header whenever the consumer decided
 * the copy's tenant (`decided` a tenant or null); `headers` itself only when the copy keeps the
 * header as it came (undefined). The transport sets a decided tenant with its own headers over
 * these; one it cannot write (SQS takes no unpaired surrogate in an attribute) leaves the copy
 * without a tenant, never with the one the consumer overruled (review 99).
 */
export function withoutOverruledTenant<V>(
  headers: Readonly<Record<string, V>>,
  decided: DeadLetterTenant,
): Readonly<Record<string, V>> {
  if (decided === undefined || !Object.hasOwn(headers, FERRY_HEADERS.tenantId)) return headers;
  const { [FERRY_HEADERS.tenantId]: _overruled, ...kept } = headers;
  return kept;
}
