import { InvalidArgumentError } from 'commander';
import { DATE_ARGUMENT_BOUNDS, isUuid, ROW_VERSION_BOUNDS } from '@ferry/core';

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

/**
 * A commander argParser for a receipt's observed version (`--expected-version`): core's
 * ROW_VERSION_BOUNDS (a row version is an `int` from 1), refused here before any id is acted on.
 */
export const rowVersion = integerBetween(...ROW_VERSION_BOUNDS);

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

/** The index by id of each list a variadic argument's parser has built (collect). */
const COLLECTED = new WeakMap<object, Map<string, unknown>>();

/**
 * A variadic argument's values so far (`previous`, as commander passes it: what the parser
 * returned for the value before, undefined for the first) with `entry` added, unless one of the
 * same key is there: then that one is `same` and the list is unchanged. The list grows in place
 * and is indexed by key, so each value costs the same however many came before (review 134:
 * looked for among them and the list copied, 50,000 ids took minutes to parse).
 */
function collect<T>(
  previous: T[] | undefined,
  entry: T,
  keyOf: (item: T) => string,
): { list: T[]; same?: T } {
  const list = previous ?? [];
  let index = COLLECTED.get(list) as Map<string, T> | undefined;
  if (index === undefined) {
    index = new Map(list.map((item) => [keyOf(item), item]));
    COLLECTED.set(list, index);
  }
  const key = keyOf(entry);
  const same = index.get(key);
  if (same !== undefined) return { list, same };
  list.push(entry);
  index.set(key, entry);
  return { list };
}

/**
 * Variadic UUID arguments of a bulk-by-id command, each id once: an id given twice (in any case)
 * is acted on and answered once, never applied and then answered as a conflict with itself.
 */
export function uuids(value: string, previous: string[] | undefined): string[] {
  return collect(previous, uuid(value), (id) => id).list;
}

const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

const DURATION = /^(\d+)(ms|s|m|h|d)$/;

/** `30s`, `15m`, `12h`, `7d` (a duration) as milliseconds, unbounded (see durationBetween). */
function durationMs(value: string): number {
  const match = DURATION.exec(value);
  if (!match) throw new InvalidArgumentError(`must be a duration like 30s, 15m, 12h or 7d, got "${value}"`);
  return Number(match[1]) * (UNITS[match[2] as string] as number);
}

/** `5000` ms as `5s`, in the largest unit that divides it. */
function shown(ms: number): string {
  const unit = Object.entries(UNITS)
    .reverse()
    .find(([, size]) => ms % size === 0);
  return unit === undefined ? `${ms}ms` : `${ms / unit[1]}${unit[0]}`;
}

/** `ms` (written `value`) if within `bounds`, else an InvalidArgumentError naming the range. */
function within(ms: number, value: string, [min, max]: readonly [number, number], zero = ''): number {
  if (ms >= min && ms <= max) return ms;
  const from =
    min > 0
      ? `a duration from ${shown(min)} to`
      : zero
        ? `0 (${zero}) or a duration up to`
        : 'a duration up to';
  throw new InvalidArgumentError(`must be ${from} ${shown(max)}, got "${value}"`);
}

/**
 * A commander argParser for a duration from `min` to `max` ms: what the option's consumer takes
 * (a timer: at most MAX_TIMER_MS, past which Node fires it after 1 ms; at least 1 ms where 0
 * makes no sense), so a value it cannot take is a usage error naming the flag, not a failure.
 */
export function durationBetween(min: number, max: number): (value: string) => number {
  return (value) => within(durationMs(value), value, [min, max]);
}

/** `--statement-timeout` as written: `0` or a duration; its bounds depend on the command (statementTimeout). */
export function statementTimeoutText(value: string): string {
  if (value !== '0') durationMs(value);
  return value;
}

/**
 * `--statement-timeout` / FERRY_STATEMENT_TIMEOUT for a command whose deadline takes `bounds`
 * (core's STATEMENT_TIMEOUT_BOUNDS, 100ms..1h; MIGRATE_TIMEOUT_BOUNDS for migrate, where `0` is
 * no deadline): `0` or a duration, in milliseconds.
 */
export function statementTimeout(value: string, bounds: readonly [number, number]): number {
  return within(value === '0' ? 0 : durationMs(value), value, bounds, 'no deadline');
}

/**
 * An age (`7d`: that long before now) in milliseconds, for a filter that becomes a Date argument:
 * one reaching before 0001-01-01 (core's DATE_ARGUMENT_BOUNDS) is refused here, naming the flag.
 */
export function age(value: string): number {
  const ms = durationMs(value);
  if (Date.now() - ms < DATE_ARGUMENT_BOUNDS[0]) {
    throw new InvalidArgumentError(`must be an age reaching back no further than 0001-01-01, got "${value}"`);
  }
  return ms;
}

/**
 * `2026-03-01` (UTC); `2026-03-01T12:00` (local time, as JavaScript reads it), `T` or `t` or a
 * space (PostgreSQL's own output) between date and time, seconds and a fraction of any length
 * optional (truncated to the millisecond, a Date's precision), then no offset (local time), `Z` /
 * `z`, or `+HH`, `+HHMM`, `+HH:MM` (or `+HH:MM:SS`, which PostgreSQL prints for a historical zone),
 * `-` alike. Nothing else: no week or ordinal date, no surrounding or inner whitespace.
 */
const ISO_TIMESTAMP =
  /^(?<year>\d{4})-(?<month>\d{2})-(?<day>\d{2})(?:[Tt ](?<hour>\d{2}):(?<minute>\d{2})(?::(?<second>\d{2})(?:\.(?<fraction>\d+))?)?(?:[Zz]|(?<sign>[+-])(?<offsetHour>\d{2})(?:(?<basicMinute>\d{2})|:(?<offsetMinute>\d{2})(?::(?<offsetSecond>\d{2}))?)?)?)?$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

function daysIn(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0);
}

/**
 * The instant of an ISO timestamp whose every field is on the calendar and the clock, else
 * undefined. Built from the fields, never by JavaScript's parser: that rolls 2026-02-30 over to
 * March 2 (a purge --before it deleted a day more than asked), takes a day 31 in any month, and
 * knows neither `+01` nor PostgreSQL's `2026-03-01 12:00:00.123456+00`.
 */
function isoInstant(value: string): Date | undefined {
  const groups = ISO_TIMESTAMP.exec(value)?.groups;
  if (groups === undefined) return undefined;
  const field = (name: string): number => Number(groups[name] ?? 0);
  const [year, month, day] = [field('year'), field('month'), field('day')];
  const [hour, minute, second] = [field('hour'), field('minute'), field('second')];
  const offsetMinute = field('basicMinute') + field('offsetMinute');
  const onCalendar = month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month);
  const onClock = hour <= 23 && minute <= 59 && second <= 59;
  const offsetOnClock = field('offsetHour') <= 23 && offsetMinute <= 59 && field('offsetSecond') <= 59;
  if (!onCalendar || !onClock || !offsetOnClock) return undefined;
  // Milliseconds, the digits beyond them truncated (.1239 is .123, never rounded up a second).
  const millisecond = Number((groups.fraction ?? '').padEnd(3, '0').slice(0, 3));
  const date = new Date(0);
  if (groups.hour === undefined) {
    date.setUTCFullYear(year, month - 1, day); // a date alone is UTC midnight
  } else if (groups.sign === undefined && !/[Zz]$/.test(value)) {
    date.setFullYear(year, month - 1, day); // no offset: local time, as JavaScript reads it
    date.setHours(hour, minute, second, millisecond);
  } else {
    date.setUTCFullYear(year, month - 1, day);
    date.setUTCHours(hour, minute, second, millisecond);
    const offsetSeconds = field('offsetHour') * 3600 + offsetMinute * 60 + field('offsetSecond');
    date.setTime(date.getTime() - (groups.sign === '-' ? -1 : 1) * offsetSeconds * 1000);
  }
  return date;
}

/** An ISO timestamp, or an age (`7d` = seven days before now), within DATE_ARGUMENT_BOUNDS. */
export function instant(value: string): Date {
  if (DURATION.test(value)) return new Date(Date.now() - age(value));
  const [earliest, latest] = DATE_ARGUMENT_BOUNDS;
  const time = isoInstant(value)?.getTime() ?? Number.NaN;
  if (Number.isNaN(time) || time < earliest || time > latest) {
    throw new InvalidArgumentError(
      'must be an ISO timestamp of a real date and time (2026-03-01, 2026-03-01T12:00:00Z) from ' +
        `0001-01-01 to 9999-12-31, or a duration like 7d, got "${value}"`,
    );
  }
  return new Date(time);
}

/**
 * A purge's `--before`: an instant as `instant`, not later than now. Nothing is published or
 * completed after now, so a cutoff in the future (2062 typed for 2026) is the whole table, not a
 * retention policy: refused, naming the deliberate way to purge everything (an age, `0s` = now).
 * Review 123.
 */
export function cutoff(value: string): Date {
  const date = instant(value);
  if (date.getTime() <= Date.now()) return date;
  throw new InvalidArgumentError(
    `must not be in the future, got "${value}" (${date.toISOString()}): every row is older than that. ` +
      'Give the cutoff of your retention policy, or an age (30d); 0s purges everything up to now',
  );
}

/**
 * `<uuid>` or `<uuid>:<version>` (inbox requeue), each id once as uuids(): the same id at the
 * same version given twice is one target; at two versions it is refused (which one was observed?).
 */
export function versionedId(value: string, previous: VersionedId[] | undefined): VersionedId[] {
  const [id, version, extra] = value.split(':');
  const [min, max] = ROW_VERSION_BOUNDS;
  const number = version === undefined ? null : /^\d+$/.test(version) ? Number(version) : Number.NaN;
  if (extra !== undefined || (number !== null && !(number >= min && number <= max))) {
    throw new InvalidArgumentError(
      `must be <id> or <id>:<version> with a version from ${min} to ${max}, got "${value}"`,
    );
  }
  const entry = { id: uuid(id as string), version: number };
  const { list, same } = collect(previous, entry, (target) => target.id);
  if (same === undefined || same.version === entry.version) return list;
  throw new InvalidArgumentError(`${entry.id} is given twice, at two versions: give the one you observed`);
}

export interface VersionedId {
  readonly id: string;
  readonly version: number | null;
}
