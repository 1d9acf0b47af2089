import pino from 'pino';

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

/** ferry's default logger: pino at FERRY_LOG_LEVEL (default `warn`) on stderr. */
export function defaultLogger(name: string): Logger {
  return guardLogger(pino({ name, level: process.env.FERRY_LOG_LEVEL ?? 'warn' }, pino.destination(2)));
}

const guarded = new WeakSet<Logger>();

/**
 * `logger` as every ferry component keeps it: a call that throws (a destination that broke, an
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
        const result: unknown = (logger[level] as (...line: unknown[]) => unknown).apply(logger, args);
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
