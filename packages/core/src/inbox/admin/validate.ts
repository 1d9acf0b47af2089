import { FerryValidationError } from '../../errors';
import { received } from '../../optionChecks';
import { assertText } from '../../validate/text';
import { isUuid } from '../sql/fragments';
import { INBOX_STATUSES, type InboxStatus } from '../types';

export const LIST_LIMIT = { default: 50, max: 500 } as const;
export const PURGE_LIMIT = { default: 100, max: 10_000 } as const;
const MAX_TEXT = 1_000;

export function requireUuid(field: string, value: unknown): string {
  if (!isUuid(value)) throw new FerryValidationError(field, 'must be a UUID');
  return value;
}

export function requireText(field: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim().length === 0 || value.length > MAX_TEXT) {
    throw new FerryValidationError(field, `must be a non-empty string of at most ${MAX_TEXT} characters`);
  }
  assertText(field, value);
  return value;
}

export function requireVersion(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new FerryValidationError('expectedVersion', 'must be a positive integer (the observed rowVersion)');
  }
  return value;
}

export function requireLimit(
  field: string,
  value: unknown,
  bounds: { default: number; max: number },
): number {
  if (value === undefined) return bounds.default;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > bounds.max) {
    throw new FerryValidationError(
      field,
      `must be an integer between 1 and ${bounds.max}, got ${received(value)}`,
    );
  }
  return value;
}

export function optionalStatus(value: unknown): InboxStatus | null {
  if (value === undefined || value === null) return null;
  if (!INBOX_STATUSES.includes(value as InboxStatus)) {
    throw new FerryValidationError('status', `must be one of ${INBOX_STATUSES.join(', ')}`);
  }
  return value as InboxStatus;
}

export function requireTenantId(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 200) {
    throw new FerryValidationError('tenantId', 'must be a non-empty string of at most 200 characters');
  }
  assertText('tenantId', value);
  return value;
}
