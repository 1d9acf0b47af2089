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
  return pino({ name, level: process.env.FERRY_LOG_LEVEL ?? 'warn' }, pino.destination(2));
}
