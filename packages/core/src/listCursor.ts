import { createHash } from 'node:crypto';
import { FerryValidationError } from './errors';

/**
 * Opaque list cursors of the admins and the audit log: base64url of the position the next page
 * starts after and a digest of what the cursor was issued for (the scope and every filter, as
 * one text), so a cursor given to another scope (another tenant's list, or the operator's list of
 * every tenant) or reused with other filters is refused (FERRY_VALIDATION_FAILED on `cursor`)
 * instead of starting at a position of another listing and silently skipping rows.
 */
export function encodeListCursor(position: readonly string[], issuedFor: string): string {
  return Buffer.from(JSON.stringify([...position, digest(issuedFor)]), 'utf8').toString('base64url');
}

/** The position of `cursor`, if `valid` takes it and it was issued for `issuedFor`. */
export function decodeListCursor(
  cursor: string,
  issuedFor: string,
  valid: (position: readonly string[]) => boolean,
): readonly string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = null;
  }
  if (!Array.isArray(parsed) || parsed.length < 2 || !parsed.every((part) => typeof part === 'string')) {
    throw new FerryValidationError('cursor', 'is not a cursor returned by list()');
  }
  const position = (parsed as string[]).slice(0, -1);
  if (!valid(position)) throw new FerryValidationError('cursor', 'is not a cursor returned by list()');
  if (parsed[parsed.length - 1] !== digest(issuedFor)) {
    throw new FerryValidationError('cursor', 'was issued for another scope or other filters');
  }
  return position;
}

/** What a listing's scope and filters are, as one text for issuedFor (JSON: no two listings alike). */
export function listingOf(...parts: ReadonlyArray<string | null>): string {
  return JSON.stringify(parts);
}

function digest(issuedFor: string): string {
  return createHash('sha256').update(issuedFor, 'utf8').digest('base64url').slice(0, 22);
}
