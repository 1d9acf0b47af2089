import { InvalidArgumentError } from 'commander';
import { isUuid } from '@ferry/core';

/** A commander argParser for an integer from `min` to `max`. */
function integerBetween(min: number, max: number): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      throw new InvalidArgumentError(`must be an integer between ${min} and ${max}, got "${value}"`);
    }
    return Number(value);
  };
}

/** A commander argParser for a positive integer at most `max`. */
export function positiveInt(max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return integerBetween(1, max);
}

/** A commander argParser for a count that may be 0 (a threshold such as health's --max-failed). */
export function nonNegativeInt(max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return integerBetween(0, max);
}

/** Case-insensitive choice; the value comes back in the canonical (upper) case. */
export function choice<T extends string>(choices: readonly T[]): (value: string) => T {
  return (value) => {
    const found = choices.find((c) => c.toLowerCase() === value.toLowerCase());
    if (found === undefined) {
      throw new InvalidArgumentError(`must be one of ${choices.join(', ')} (any case), got "${value}"`);
    }
    return found;
  };
}

export function uuid(value: string): string {
  if (!isUuid(value)) throw new InvalidArgumentError(`must be a UUID, got "${value}"`);
  return value.toLowerCase();
}

/**
 * Variadic UUID arguments of a bulk-by-id command, each id once: an id given twice (in any case)
 * is acted on and answered once, never applied and then answered as a conflict with itself.
 */
export function uuids(value: string, previous: string[] | undefined): string[] {
  const id = uuid(value);
  return previous?.includes(id) === true ? previous : [...(previous ?? []), id];
}

const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `30s`, `15m`, `12h`, `7d` (a duration) as milliseconds. */
export function duration(value: string): number {
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(value);
  if (!match) throw new InvalidArgumentError(`must be a duration like 30s, 15m, 12h or 7d, got "${value}"`);
  return Number(match[1]) * (UNITS[match[2] as string] as number);
}

/** `--statement-timeout` as written: `0` or a duration; its bounds depend on the command (statementTimeout). */
export function statementTimeoutText(value: string): string {
  if (value !== '0') duration(value);
  return value;
}

/** `5000` ms as `5s`, in the largest unit that divides it. */
function shown(ms: number): string {
  const unit = Object.entries(UNITS)
    .reverse()
    .find(([, size]) => ms % size === 0);
  return unit === undefined ? `${ms}ms` : `${ms / unit[1]}${unit[0]}`;
}

/**
 * `--statement-timeout` / FERRY_STATEMENT_TIMEOUT for a command whose deadline takes `bounds`
 * (core's STATEMENT_TIMEOUT_BOUNDS, 100ms..1h; MIGRATE_TIMEOUT_BOUNDS for migrate, where `0` is
 * no deadline): `0` or a duration, in milliseconds.
 */
export function statementTimeout(value: string, bounds: readonly [number, number]): number {
  const ms = value === '0' ? 0 : duration(value);
  const [min, max] = bounds;
  if (ms < min || ms > max) {
    const range =
      min === 0
        ? `0 (no deadline) or a duration up to ${shown(max)}`
        : `a duration from ${shown(min)} to ${shown(max)}`;
    throw new InvalidArgumentError(`must be ${range}, got "${value}"`);
  }
  return ms;
}

/** An ISO timestamp, or a duration meaning that long ago (`7d` = seven days before now). */
export function instant(value: string): Date {
  if (/^\d+(ms|s|m|h|d)$/.test(value)) return new Date(Date.now() - duration(value));
  const parsed = /^\d{4}-\d{2}-\d{2}/.test(value) ? new Date(value) : new Date(Number.NaN);
  if (Number.isNaN(parsed.getTime())) {
    throw new InvalidArgumentError(`must be an ISO timestamp or a duration like 7d, got "${value}"`);
  }
  return parsed;
}

/**
 * `<uuid>` or `<uuid>:<version>` (inbox requeue), each id once as uuids(): the same id at the
 * same version given twice is one target; at two versions it is refused (which one was observed?).
 */
export function versionedId(value: string, previous: VersionedId[] | undefined): VersionedId[] {
  const [id, version, extra] = value.split(':');
  if (extra !== undefined || (version !== undefined && !/^\d+$/.test(version))) {
    throw new InvalidArgumentError(`must be <id> or <id>:<version>, got "${value}"`);
  }
  const entry = { id: uuid(id as string), version: version === undefined ? null : Number(version) };
  const same = previous?.find((p) => p.id === entry.id);
  if (same === undefined) return [...(previous ?? []), entry];
  if (same.version === entry.version) return previous as VersionedId[];
  throw new InvalidArgumentError(`${entry.id} is given twice, at two versions: give the one you observed`);
}

export interface VersionedId {
  readonly id: string;
  readonly version: number | null;
}
