import type { ParsedArgs } from './args';

/** A command-line mistake: printed with the usage text, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export function requiredFlag(args: ParsedArgs, name: string): string {
  const value = args.flags[name];
  if (value === undefined || value === 'true' || value === '') {
    throw new UsageError(`--${name} <value> is required`);
  }
  return value;
}

export function optionalFlag(args: ParsedArgs, name: string): string | undefined {
  const value = args.flags[name];
  if (value === undefined) return undefined;
  if (value === 'true' || value === '') throw new UsageError(`--${name} needs a value`);
  return value;
}

export function optionalInteger(args: ParsedArgs, name: string): number | undefined {
  const value = optionalFlag(args, name);
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a positive integer, got "${value}"`);
  return Number(value);
}

export function requiredInteger(args: ParsedArgs, name: string): number {
  requiredFlag(args, name);
  return optionalInteger(args, name) as number;
}

export function requiredChoice<T extends string>(args: ParsedArgs, name: string, choices: readonly T[]): T {
  const value = requiredFlag(args, name);
  if (!choices.includes(value as T)) {
    throw new UsageError(`--${name} must be one of ${choices.join(', ')}, got "${value}"`);
  }
  return value as T;
}

export function positionalCount(args: ParsedArgs, what: string, min: number, max: number): string[] {
  const { positionals } = args;
  if (positionals.length < min || positionals.length > max) {
    const expected = min === max ? `exactly ${min}` : max === Infinity ? `at least ${min}` : `${min}-${max}`;
    throw new UsageError(`expected ${expected} ${what}, got ${positionals.length}`);
  }
  return positionals;
}

export function isJson(args: ParsedArgs): boolean {
  return args.flags.json !== undefined;
}
