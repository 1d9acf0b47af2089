/**
 * The one way a timestamp column becomes a JavaScript Date (every record's, message's, receipt's,
 * audit entry's and stats' time). PostgreSQL's timestamptz holds 'infinity', '-infinity' and 4713 BC
 * to 294276 AD; a Date holds ±8.64e15 ms around 1970 (DATE_RANGE_MS, about 271821 BC to 275760 AD).
 * Read as a timestamptz, node-postgres (and Kysely on it) gave ±Infinity for the infinities and an
 * Invalid Date past 275760, Prisma an Invalid Date for those and for any year past 9999 or BC: a
 * record whose time an operator or a migration set that way carried an Invalid Date (toISOString
 * throws, JSON writes null) to the admin, the CLI, a publisher, a handler
 * (test/review88-time.test.ts).
 *
 * So the time crosses the wire as milliseconds since 1970 (float8, exact for every millisecond),
 * clamped in SQL to the Date range: a time a Date holds is that time cut to the millisecond (as the
 * drivers cut it), one beyond it (the infinities included) the nearest end of the range. The same
 * through every driver, and no timestamp text for the driver to parse.
 */

/** The ends of a Date's range, in ms from 1970 (ECMA-262: time values within ±8.64e15). */
export const DATE_RANGE_MS = 8.64e15;

/**
 * SQL: the timestamp expression `column` as DATE_RANGE_MS-clamped ms (float8), NULL as NULL (the
 * CASE: least / greatest skip a NULL, and would make it an end of the range).
 */
export function dateMs(column: string): string {
  const ms = `floor(extract(epoch FROM ${column}) * 1000)`;
  return `(CASE WHEN ${column} IS NOT NULL THEN least(greatest(${ms}, -${DATE_RANGE_MS}), ${DATE_RANGE_MS}) END)::float8`;
}

/** A column read with dateMs, from any driver (a number; a numeric text from a driver told to). */
export type DateMs = number | string;

/** The Date of a dateMs value (clamped again, so ±Infinity from a driver is an end of the range too). */
export function dateOf(value: DateMs): Date {
  return new Date(Math.min(Math.max(Number(value), -DATE_RANGE_MS), DATE_RANGE_MS));
}

/** dateOf, NULL as null. */
export function maybeDateOf(value: DateMs | null): Date | null {
  return value === null ? null : dateOf(value);
}
