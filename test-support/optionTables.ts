import { FerryConfigError, FerryValidationError } from '@ferry/core';

/**
 * One row of a package's option table: an entry point called with one bad option, the option
 * path the FerryConfigError must name, and, for a wrongly typed value, how it is shown
 * (`"50" (string)`). The rule every options object follows (optionChecks.ts): unknown keys are
 * refused, a wrongly typed value is shown as received, synchronously, before any I/O.
 */
export interface OptionRow {
  readonly entry: string;
  readonly call: () => unknown;
  readonly option: string;
  /** Text the message must contain besides the option; default `is not a known option`. */
  readonly shows?: string;
  /**
   * A gap known and left open, with where it is fixed: the row runs as `it.failing`, so it
   * fails the table once the gap is closed (then drop the mark).
   */
  readonly knownGap?: string;
}

/** The FerryConfigError `call` throws, or rejects with (an async entry point). */
export async function configErrorOf(call: () => unknown): Promise<FerryConfigError> {
  let outcome: unknown;
  try {
    outcome = await call();
  } catch (error) {
    if (error instanceof FerryConfigError) return error;
    throw error;
  }
  // Accepted: a consumer or connection it made is closed, so the failing row leaves nothing open.
  const close = (outcome as { close?: unknown } | null | undefined)?.close;
  if (typeof close === 'function') await (close as () => Promise<void>).call(outcome);
  throw new Error(`expected a FerryConfigError, got ${String(outcome)}`);
}

/** A misspelt key (`key`) refused as not a known option, naming its path. */
export function misspelt(entry: string, option: string, call: () => unknown): OptionRow {
  return { entry, call, option };
}

/** A wrongly typed value refused, naming its path and showing it as received. */
export function wrongType(entry: string, option: string, shows: string, call: () => unknown): OptionRow {
  return { entry, call, option, shows };
}

/** `row` marked as a known gap (see OptionRow.knownGap). */
export function knownGap(row: OptionRow, where: string): OptionRow {
  return { ...row, knownGap: where };
}

async function check(row: OptionRow): Promise<void> {
  const error = await configErrorOf(row.call);
  expect(error.code).toBe('FERRY_CONFIG_INVALID');
  expect(error.option).toBe(row.option);
  expect(error.message).toContain(row.option);
  expect(error.message).toContain(row.shows ?? 'is not a known option');
}

/** The table as one test per row: code, option path, and the received value or unknown-key text. */
export function describeOptionTable(rows: readonly OptionRow[]): void {
  for (const row of rows) {
    const name = `${row.entry}: ${row.option}`;
    if (row.knownGap === undefined) it(name, () => check(row));
    else it.failing(`${name} (known gap: ${row.knownGap})`, () => check(row));
  }
}

/**
 * One row of an admin method's argument table: a call with one misspelt key or wrongly typed
 * value, and the field the FerryValidationError (FERRY_VALIDATION_FAILED) must name. Call
 * arguments are refused as invalid input, not as configuration: the method's other refusals
 * (`limit`, `expectedVersion`, ...) are FerryValidationErrors too.
 */
export interface ArgumentRow<F> {
  readonly method: string;
  readonly call: (fixture: F) => unknown;
  readonly field: string;
  /** Text the message must contain besides the field. */
  readonly shows: string;
}

/** A misspelt key refused as not an argument of `method`, naming the key as written. */
export function misspeltArgument<F>(
  method: string,
  key: string,
  call: (fixture: F) => unknown,
  shows = 'is not an argument',
): ArgumentRow<F> {
  return { method, call, field: key, shows };
}

/** A wrongly typed argument value refused, naming the field and showing the value received. */
export function wrongArgument<F>(
  method: string,
  field: string,
  shows: string,
  call: (fixture: F) => unknown,
): ArgumentRow<F> {
  return { method, call, field, shows };
}

/** The FerryValidationError `call` throws or rejects with; anything else (an answer) fails. */
export async function validationErrorOf(call: () => unknown): Promise<FerryValidationError> {
  let outcome: unknown;
  try {
    outcome = await call();
  } catch (error) {
    if (error instanceof FerryValidationError) return error;
    throw error;
  }
  throw new Error(
    `expected a FerryValidationError, the call answered ${String(JSON.stringify(outcome)).slice(0, 200)}`,
  );
}

/**
 * The table as one test per row: the call is refused with FERRY_VALIDATION_FAILED naming the
 * field, and `state()` (the rows it could change and the audit trail) reads the same after the
 * refusal as before it: nothing applied, nothing audited. The rows share one `fixture()`: a call
 * that changed it fails its own row (the state check), and building one per row (hundreds of
 * rows) cost a minute.
 */
export function describeArgumentTable<F>(
  rows: readonly ArgumentRow<F>[],
  fixture: () => Promise<F>,
  state: () => Promise<unknown>,
): void {
  let shared: Promise<F> | undefined;
  for (const row of rows) {
    it(`${row.method}: ${row.field} ${row.shows}`, async () => {
      const f = await (shared ??= fixture());
      const before = await state();
      const error = await validationErrorOf(() => row.call(f));
      expect(error.code).toBe('FERRY_VALIDATION_FAILED');
      expect(error.field).toBe(row.field);
      expect(error.message).toContain(row.field);
      expect(error.message).toContain(row.shows);
      expect(await state()).toEqual(before);
    });
  }
}
