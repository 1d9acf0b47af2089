import { FerryConfigError } from '../errors';

/**
 * Option checks shared by the transports: each returns the value it checked, or throws a
 * FerryConfigError naming the option.
 */
export function integerOption(
  name: string,
  value: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new FerryConfigError(name, `must be an integer between ${min} and ${max}`);
  }
  return value;
}

export function nonEmptyOption(name: string, value: string | undefined): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new FerryConfigError(name, 'must be a non-empty string');
  }
  return value;
}
