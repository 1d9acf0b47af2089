import { IDENTIFIER_LIMITS } from './identifierLimits';
import { identifierFault, textFault } from './text';

/** Why a string cannot be a tenant id; `invalidText` when PostgreSQL cannot store it (textFault). */
export interface TenantIdFault {
  readonly reason: string;
  readonly invalidText: boolean;
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
  if (value.length === 0) return { reason: 'must not be empty', invalidText: false };
  if (value.length > max) {
    return { reason: `is ${value.length} characters; the limit is ${max}`, invalidText: false };
  }
  const identifier = identifierFault(value);
  if (identifier !== null) return { reason: identifier, invalidText: false };
  const text = textFault(value);
  return text === null ? null : { reason: text, invalidText: true };
}
