import {
  integerArgument,
  oneOfArgument,
  received,
  stringArgument,
  textArgument,
  uuidArgument,
} from '../../optionChecks';
import { tenantIdString } from '../../validate/tenantId';
import { IDENTIFIER_LIMITS } from '../../validate/identifierLimits';
import { FerryValidationError } from '../../errors';
import { assertText } from '../../validate/text';
import { isUuid } from '../sql/fragments';
import { INBOX_STATUSES, type InboxStatus } from '../types';
import { consumerNameFault } from '../validateInput';

export const LIST_LIMIT = { default: 50, max: 500 } as const;
export const PURGE_LIMIT = { default: 100, max: 10_000 } as const;
const MAX_TEXT = 1_000;
/**
 * The `expectedVersion` a requeue or replay takes: a row_version is an `int` from 1, and a larger
 * expected version would be refused by PostgreSQL mid-action. Exported for a tool that parses
 * versions up front (the CLI's `<id>:<version>`), so it refuses them before acting on any id.
 */
export const ROW_VERSION_BOUNDS = [1, 2_147_483_647] as const;

export function requireUuid(field: string, value: unknown): string {
  return uuidArgument(field, value);
}

/**
 * A consumer name a receipt can carry (replay's `targetConsumer`): acceptance's own rule
 * (consumerNameFault), 1 to IDENTIFIER_LIMITS.consumer characters of valid text, so no name is refused by the database's
 * identity index mid-action, nor makes a receipt acceptance would never take (review 35).
 */
export function requireConsumerName(field: string, value: unknown): string {
  if (typeof value === 'string') assertText(field, value); // reason invalid_text, as acceptance's
  const fault = consumerNameFault(value);
  if (fault !== null) {
    throw new FerryValidationError(
      field,
      `must be a consumer name: a non-empty string of at most ${IDENTIFIER_LIMITS.consumer} characters (${fault}), got ${received(value)}`,
    );
  }
  return value as string;
}

export function requireText(field: string, value: unknown): string {
  return textArgument(field, value, MAX_TEXT);
}

/** The observed `rowVersion`: a positive integer PostgreSQL's `int` column can hold. */
export function requireVersion(value: unknown): number {
  return integerArgument('expectedVersion', value, ...ROW_VERSION_BOUNDS);
}

export function requireLimit(
  field: string,
  value: unknown,
  bounds: { default: number; max: number },
): number {
  return integerArgument(field, value, 1, bounds.max, bounds.default);
}

export function optionalStatus(value: unknown): InboxStatus | null {
  if (value === null) return null;
  return oneOfArgument('status', value, INBOX_STATUSES) ?? null;
}

/** A list cursor as given: anything but a string is refused before it is decoded. */
export function optionalCursor(value: unknown): string | undefined {
  return value === undefined ? undefined : stringArgument('cursor', value);
}

/** A `get(id)` argument: a string that is no UUID names no receipt (null); anything else is refused. */
export function lookupId(value: unknown): string | null {
  return isUuid(stringArgument('id', value)) ? (value as string) : null;
}

/** A stored tenant id, taken as it is: a string of 1..255 characters PostgreSQL can hold. */
export function requireTenantId(value: unknown): string {
  assertText('tenantId', tenantIdString(value));
  return value as string;
}
