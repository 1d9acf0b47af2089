import { FerryConfigError } from './errors';

/**
 * A resolved option as an error names it: `name (value)`, or `name (value, the default)` when
 * the user did not set it, so a refusal never blames an option the user never wrote.
 */
export interface OptionValue {
  readonly name: string;
  readonly value: number;
  /** True when the user set it; false when it is the default (or derived from another option). */
  readonly given: boolean;
}

export function describeOption(option: OptionValue): string {
  return option.given ? `${option.name} (${option.value})` : `${option.name} (${option.value}, the default)`;
}

/**
 * The value of a ceiling option (a maximum delay) that must be at least a floor option (its
 * initial delay): left out, its default rises to the floor, so every floor inside its bounds
 * works with the ceiling at its default; set below the floor, FerryConfigError naming it.
 * `given` is the ceiling the user set, already checked against its own bounds.
 */
export function ceilingOption(
  name: string,
  given: number | undefined,
  fallback: number,
  floor: OptionValue,
): number {
  if (given === undefined) return Math.max(fallback, floor.value);
  if (given < floor.value) {
    throw new FerryConfigError(name, `must be at least ${describeOption(floor)}, got ${given}`);
  }
  return given;
}

/**
 * `value` (the user's, within its own bounds) must be less than `limit` (another option, the
 * user's or its default): else FerryConfigError naming `name` and saying whether `limit` is a
 * default. For a default derived from `limit`, derive it below the limit instead.
 */
export function belowOption(name: string, value: number, limit: OptionValue): number {
  if (value >= limit.value) {
    throw new FerryConfigError(name, `must be less than ${describeOption(limit)}, got ${value}`);
  }
  return value;
}
