import { FerryValidationError } from '../errors';
import { received } from '../optionChecks';
import { TRANSPORT_REJECT_REASONS } from '../transport/errors';
import { IDENTIFIER_LIMITS } from './identifierLimits';
import { identifierFault, textFault } from './text';

/** Why a string cannot be a tenant id; `rule` invalid_text when PostgreSQL cannot store it (textFault). */
export interface TenantIdFault {
  readonly reason: string;
  readonly rule?: typeof TRANSPORT_REJECT_REASONS.invalidText;
}

/**
 * The one rule of a tenant id as acceptance takes it (inputFault), also applied to a consumer's
 * `tenant: { fixed }` at attach (checkTenantSource), so a consumer never attaches with a tenant
 * every one of its messages would be refused for: 1..IDENTIFIER_LIMITS.tenantId characters,
 * identifierFault (shows something, no control character, line break or bidirectional control)
 * and textFault (no NUL, no unpaired surrogate). `reason` reads after the field's name.
 */
export function tenantIdFault(value: string): TenantIdFault | null {
  const max = IDENTIFIER_LIMITS.tenantId;
  if (value.length === 0) return { reason: 'must not be empty' };
  if (value.length > max) {
    return { reason: `is ${value.length} characters; the limit is ${max}` };
  }
  const identifier = identifierFault(value);
  if (identifier !== null) return { reason: identifier };
  const text = textFault(value);
  return text === null ? null : { reason: text, rule: TRANSPORT_REJECT_REASONS.invalidText };
}

/**
 * `value` as a tenant id argument, type and length only (1..IDENTIFIER_LIMITS.tenantId
 * characters), else FerryValidationError naming the limit: the inbox admin's check of a stored
 * tenant, which it takes as it is.
 */
export function tenantIdString(value: unknown): string {
  const max = IDENTIFIER_LIMITS.tenantId;
  if (typeof value !== 'string' || value.length === 0 || value.length > max) {
    throw new FerryValidationError(
      'tenantId',
      `must be a non-empty string of at most ${max} characters, got ${received(value)}`,
    );
  }
  return value;
}

/**
 * `value` as a tenant id an application names (both admins' forTenant), else FerryValidationError
 * (rule `invalid_text` for textFault's): tenantIdString, then tenantIdFault, so no tenant id
 * acceptance or emit refuses names a scope.
 */
export function assertTenantId(value: unknown): string {
  const fault = tenantIdFault(tenantIdString(value));
  if (fault === null) return value as string;
  throw new FerryValidationError('tenantId', fault.reason, 'FERRY_VALIDATION_FAILED', fault.rule);
}
