import { FerryConfigError } from '@ferry/core';

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
