import { FerryValidationError } from '../../errors';
import { isUuid } from '../sql/fragments';

/**
 * Opaque list cursors: base64url of the last id and the filter it was issued for, so a
 * cursor reused with other filters is refused instead of silently skipping rows.
 */
export function encodeCursor(lastId: string, filter: string): string {
  return Buffer.from(JSON.stringify([lastId, filter]), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string, filter: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new FerryValidationError('cursor', 'is not a cursor returned by list()');
  }
  if (!Array.isArray(parsed) || !isUuid(parsed[0])) {
    throw new FerryValidationError('cursor', 'is not a cursor returned by list()');
  }
  if (parsed[1] !== filter) throw new FerryValidationError('cursor', 'was issued for other filters');
  return parsed[0];
}
