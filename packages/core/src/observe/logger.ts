import pino from 'pino';
import { FerryConfigError } from '../errors';
import { received } from '../optionChecks';
import { hasUrlCredentials, stripUrlCredentials } from '../redact/urlCredentials';

/** One log method, as pino declares it: fields first, then the message; or the message alone. */
export interface LogFn {
  (fields: object, message?: string): void;
  (message: string): void;
}

/**
 * The logger every ferry component takes: any pino-compatible logger (pino itself, or
 * anything with these four methods; `fromNestLogger` in @ferry/nestjs adapts Nest's
 * LoggerService). ferry logs FAILED and DEAD transitions and circuit changes at warn.
 */
export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
}

const LOG_METHODS = ['debug', 'info', 'warn', 'error'] as const;

/**
 * How `holder[key]` reads: a function, something else, or a read that throws (a facade's getter or
 * a Proxy before the logger behind it is configured). guardLogger looks each method up at call
 * time, so a logger whose read throws works once configured and loses its lines harmlessly until.
 */
function readMethod(holder: object, key: string): 'function' | 'other' | 'throws' {
  try {
    return typeof (holder as Record<string, unknown>)[key] === 'function' ? 'function' : 'other';
  } catch {
    return 'throws';
  }
}

/**
 * The `logger` option of every ferry component, checked when the component is created:
 * `undefined` passes (the default logger); anything else must have pino's four methods (a method
 * whose read throws counts as present: see readMethod). Not checked, a logger without one
 * (NestJS's Logger has no `info`) or a string lost every line of that level in guardLogger,
 * silently: relay and worker failures included.
 */
export function loggerOption(name: string, value: unknown): Logger | undefined {
  if (value === undefined) return undefined;
  const what = 'must be a logger with debug(), info(), warn() and error() (pino, or anything with them)';
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) {
    throw new FerryConfigError(name, `${what}, got ${received(value)}`);
  }
  const missing = LOG_METHODS.filter((level) => readMethod(value, level) === 'other');
  if (missing.length === 0) return value as Logger;
  // NestJS's Logger and LoggerService: log() for info, (message, context) arguments.
  const nest =
    readMethod(value, 'log') === 'function'
      ? '; a NestJS Logger (log() in place of info()) is adapted by fromNestLogger(logger) from @ferry/nestjs'
      : '';
  throw new FerryConfigError(
    name,
    `${what}, got an object missing ${missing.map((level) => `${level}()`).join(', ')}${nest}`,
  );
}

/** ferry's default logger: pino at FERRY_LOG_LEVEL (default `warn`) on stderr. */
export function defaultLogger(name: string): Logger {
  return guardLogger(pino({ name, level: process.env.FERRY_LOG_LEVEL ?? 'warn' }, pino.destination(2)));
}

const guarded = new WeakSet<Logger>();

/** How deep into a line's fields credentials are looked for (fields, an error, its cause, …). */
const MAX_DEPTH = 5;
/** How many causes of an error are followed beside MAX_DEPTH (a logger's err serializer follows them all). */
const MAX_CAUSES = 32;

/**
 * What a logger writes of an object in place of its fields, when that differs: a URL object's
 * href (its toJSON), any other object's toJSON() (what JSON.stringify writes). Errors are
 * serialized from their fields; `undefined` when the fields are what is written.
 */
function written(value: object): { readonly value: unknown } | undefined {
  if (value instanceof URL) return { value: value.href };
  if (value instanceof Error) return undefined;
  const toJSON: unknown = (value as { toJSON?: unknown }).toJSON;
  return typeof toJSON === 'function'
    ? { value: (toJSON as (key: string) => unknown).call(value, '') }
    : undefined;
}

/** The depth and the causes left for a field `key` of `value`: an error's cause costs no depth. */
function below(value: object, key: string, depth: number, causes: number): [number, number] {
  return key === 'cause' && value instanceof Error && causes < MAX_CAUSES
    ? [depth, causes + 1]
    : [depth + 1, causes];
}

/** Whether `value` holds, within MAX_DEPTH (and MAX_CAUSES), a string with a URL's user or password. */
function carriesCredentials(value: unknown, depth: number, causes: number): boolean {
  if (typeof value === 'string') return hasUrlCredentials(value);
  if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH) return false;
  const shown = written(value);
  if (shown !== undefined) return carriesCredentials(shown.value, depth + 1, causes);
  // An error's message, stack and cause are own properties that are not enumerable.
  const keys = value instanceof Error ? Object.getOwnPropertyNames(value) : Object.keys(value);
  return keys.some((key) =>
    carriesCredentials((value as Record<string, unknown>)[key], ...below(value, key, depth, causes)),
  );
}

/**
 * `value` without URL credentials: a string stripped; a URL object or an object with toJSON
 * replaced by what a logger would write of it, stripped; an object (an error, with its prototype,
 * so a logger still serializes it as one) copied with its fields stripped, only where it carries
 * any. Everything else is passed on as it is, the same object.
 */
function withoutCredentials(
  value: unknown,
  depth = 0,
  causes = 0,
  copies: Map<object, object> = new Map(),
): unknown {
  if (typeof value === 'string') return stripUrlCredentials(value);
  // A cycle (an error that is its cause's cause) is copied as a cycle of copies.
  const copied = value !== null && typeof value === 'object' ? copies.get(value) : undefined;
  if (copied !== undefined) return copied;
  if (!carriesCredentials(value, depth, causes)) return value;
  const shown = written(value as object);
  if (shown !== undefined) return withoutCredentials(shown.value, depth + 1, causes, copies);
  if (Array.isArray(value))
    return value.map((item: unknown) => withoutCredentials(item, depth + 1, causes, copies));
  const copy: object = Object.create(Object.getPrototypeOf(value) as object | null) as object;
  copies.set(value as object, copy);
  for (const [key, field] of Object.entries(Object.getOwnPropertyDescriptors(value))) {
    const cleaned =
      'value' in field
        ? {
            ...field,
            value: withoutCredentials(field.value, ...below(value as object, key, depth, causes), copies),
          }
        : field;
    Object.defineProperty(copy, key, cleaned);
  }
  return copy;
}

/**
 * `logger` as every ferry component keeps it. No line carries a URL's user and password
 * (`amqp://[redacted]@host`): a broker's or driver's error may quote its connection string
 * (Node's URL parser keeps the whole input on its error). A call that throws (a destination that broke, an
 * adapter with a bug, a method missing) or an async method that rejects costs its line and
 * nothing else. Without it, a throw from a log line escaped into ferry's work: a relay cycle or
 * an acceptance rejected after its commit, a consumer's reconnect loop ended. Each method is looked up at call time and called
 * on `logger` itself (pino's methods need their `this`). Guarding a guarded logger returns it.
 */
export function guardLogger(logger: Logger): Logger {
  if (guarded.has(logger)) return logger;
  const method =
    (level: keyof Logger): LogFn =>
    (...args: [object, string?] | [string]): void => {
      try {
        const line = args.map((arg) => withoutCredentials(arg));
        const result: unknown = (logger[level] as (...line: unknown[]) => unknown).apply(logger, line);
        // An async adapter's rejection would otherwise be unhandled, which ends a Node process.
        if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function')
          (result as PromiseLike<unknown>).then(undefined, () => undefined);
      } catch {
        // The application's logger failed: its line is lost; ferry's work goes on.
      }
    };
  const safe: Logger = {
    debug: method('debug'),
    info: method('info'),
    warn: method('warn'),
    error: method('error'),
  };
  guarded.add(safe);
  return safe;
}

/**
 * `logger` (guarded: guardLogger) until `ended` aborts, silent after: the lines of a component's
 * work that its close() gave up on (past closeTimeoutMs) end with close(), as its events do
 * (consumerEmitter). Without it that work, its requests aborted, logged their failures after
 * close() resolved (review 137: an SQS batch's dead-letter copy; review 132: Kafka's disconnects).
 */
export function loggerUntil(logger: Logger, ended: AbortSignal): Logger {
  const safe = guardLogger(logger);
  const method =
    (level: keyof Logger): LogFn =>
    (...args: [object, string?] | [string]): void => {
      if (!ended.aborted) (safe[level] as (...line: unknown[]) => void)(...args);
    };
  const until: Logger = {
    debug: method('debug'),
    info: method('info'),
    warn: method('warn'),
    error: method('error'),
  };
  guarded.add(until);
  return until;
}
