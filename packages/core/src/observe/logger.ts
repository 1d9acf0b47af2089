import pino, { type Logger } from 'pino';

/** ferry's default logger: pino at FERRY_LOG_LEVEL (default `warn`) on stderr. */
export function defaultLogger(name: string): Logger {
  return pino({ name, level: process.env.FERRY_LOG_LEVEL ?? 'warn' }, pino.destination(2));
}

export type { Logger };
