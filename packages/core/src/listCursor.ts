import { createHash } from 'node:crypto';
import { FerryValidationError } from './errors';
import { DATE_ARGUMENT_BOUNDS } from './optionChecks';
import { isUuid } from './uuid';

/**
 * Opaque list cursors of the admins and the audit log: base64url of the position the next page
 * starts after and a digest of what the cursor was issued for (the scope and every filter, as
 * one text), so a cursor given to another scope (another tenant's list, or the operator's list of
 * every tenant) or reused with other filters is refused (FERRY_VALIDATION_FAILED on `cursor`)
 * instead of starting at a position of another listing and silently skipping rows.
 *
 * A listing's time bound (the outbox's `createdBefore`, the audit log's `since`) is no such
 * filter: callers compute it from an age at each call (`now - 7d`, the CLI's `--older-than 7d`),
 * so each page would name another instant. The cursor carries the first page's bound instead, and
 * every later page is listed with it (a later bound would shift rows: an audit `since` moving
 * forward drops the listing's tail); the digest binds only whether there is one, so a cursor of a
 * bounded listing is refused without a bound and the other way round.
 */
export function encodeListCursor(
  position: readonly string[],
  issuedFor: string,
  bound: Date | null = null,
): string {
  const parts = [
    ...position,
    ...(bound === null ? [] : [bound.toISOString()]),
    digest(issuedFor, bound !== null),
  ];
  return Buffer.from(JSON.stringify(parts), 'utf8').toString('base64url');
}

/** A decoded cursor: where the next page starts, and the time bound of the listing's first page. */
export interface ListCursor {
  readonly position: readonly string[];
  readonly bound: Date | null;
}

/**
 * What each part of a listing's position is, as its statement takes it: `uuid` (an inbox
 * receipt's id), `bigint` (a serial: 0 to 9,223,372,036,854,775,807, the outbox's seq, an audit
 * entry's id), `micros` (an instant in microseconds since 1970 a timestamptz holds, MICROS, the outbox's
 * created_at, or 'infinity' / '-infinity', a created_at SQL set so). The digest binds a
 * cursor to its listing but is no secret (anyone with the source can write one for their own
 * listing), so a position is checked part by part before
 * it reaches PostgreSQL: a number beyond a bigint (22003) or an instant beyond a timestamp (22008)
 * is refused on `cursor` like any other cursor list() did not return (review 70).
 */
export type PositionPart = 'uuid' | 'bigint' | 'micros';

const MAX_BIGINT = BigInt('9223372036854775807');
/**
 * The instants PostgreSQL's timestamptz stores, in microseconds since 1970: 4714-11-24 BC to
 * 294276-12-31 23:59:59.999999 (UTC). A row's created_at can be any of them (SQL writes it), and
 * list() ends a page with it: years 1 to 9999 only made the cursor of such a page refused.
 */
const MICROS = [BigInt('-210866803200000000'), BigInt('9224318015999999999')] as const;

function validPart(kind: PositionPart, part: string): boolean {
  if (kind === 'uuid') return isUuid(part);
  if (kind === 'micros' && (part === 'infinity' || part === '-infinity')) return true;
  if (!/^-?\d{1,19}$/.test(part)) return false;
  const value = BigInt(part);
  return kind === 'bigint'
    ? !part.startsWith('-') && value <= MAX_BIGINT
    : value >= MICROS[0] && value <= MICROS[1];
}

/**
 * The position of `cursor`, if it has the parts `shape` names and was issued for `issuedFor`, and
 * the bound it carries when `bounded` (the caller was given a time bound; the cursor's is the one
 * to use).
 */
export function decodeListCursor(
  cursor: string,
  issuedFor: string,
  shape: readonly PositionPart[],
  bounded = false,
): ListCursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = null;
  }
  if (!Array.isArray(parsed) || parsed.length < 2 || !parsed.every((part) => typeof part === 'string')) {
    throw new FerryValidationError('cursor', 'is not a cursor returned by list()');
  }
  const parts = parsed as string[];
  const mark = parts[parts.length - 1];
  if (mark === digest(issuedFor, !bounded)) {
    const was = bounded ? 'without a time bound' : 'with a time bound: give one again';
    throw new FerryValidationError('cursor', `was issued for this listing ${was}`);
  }
  if (mark !== digest(issuedFor, bounded)) {
    throw new FerryValidationError('cursor', 'was issued for another scope or other filters');
  }
  const position = parts.slice(0, bounded ? -2 : -1);
  const bound = bounded ? instantOf(parts[parts.length - 2] as string) : null;
  const valid =
    position.length === shape.length && shape.every((kind, i) => validPart(kind, position[i] as string));
  if (!valid || bound === undefined) {
    throw new FerryValidationError('cursor', 'is not a cursor returned by list()');
  }
  return { position, bound };
}

/**
 * The time bound a later page is listed with: the bound the cursor carries (its listing's first
 * page's), unless the caller's is earlier. Recomputing an age at each call only moves the bound
 * later (`now - 7d`, an audit `since` of `now - 24h`): that is still the first page's listing.
 * An earlier bound is the caller's own choice and is honoured: an earlier `createdBefore` lists a
 * subset of the same rows; an earlier audit `since` adds older rows at the listing's end (newest
 * first). A caller is never answered rows its own bound excludes.
 */
export function pageBound(given: Date | null, carried: Date | null): Date | null {
  if (given === null || carried === null) return carried ?? given;
  return given.getTime() < carried.getTime() ? given : carried;
}

/** The Date of an ISO text encodeListCursor wrote (a Date argument's, DATE_ARGUMENT_BOUNDS), or undefined. */
function instantOf(text: string): Date | undefined {
  const date = new Date(text);
  const [earliest, latest] = DATE_ARGUMENT_BOUNDS;
  const time = date.getTime();
  return Number.isNaN(time) || time < earliest || time > latest || date.toISOString() !== text
    ? undefined
    : date;
}

/** What a listing's scope and filters are, as one text for issuedFor (JSON: no two listings alike). */
export function listingOf(...parts: ReadonlyArray<string | null>): string {
  return JSON.stringify(parts);
}

/** `issuedFor`'s digest; a bounded listing's differs (JSON text never ends with a space). */
function digest(issuedFor: string, bounded: boolean): string {
  const text = bounded ? `${issuedFor} bounded` : issuedFor;
  return createHash('sha256').update(text, 'utf8').digest('base64url').slice(0, 22);
}
