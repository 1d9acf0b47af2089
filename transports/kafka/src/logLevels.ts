import { logLevel, type LogEntry } from 'kafkajs';

export type LogMethod = 'error' | 'warn' | 'info' | 'debug';

const BY_LEVEL: Readonly<Record<number, LogMethod>> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
};

const RANK: Readonly<Record<LogMethod, number>> = { error: 3, warn: 2, info: 1, debug: 0 };

interface Rule {
  readonly level: LogMethod;
  /** Why the line is less severe than kafkajs says. */
  readonly reason: string;
  matches(namespace: string, message: string, fields: Readonly<Record<string, unknown>>): boolean;
}

/**
 * kafkajs logs many recoverable events at ERROR. These rules lower them (never raise): the first
 * matching rule wins. Real failures reach ferry as errors anyway (publish outcomes, consumer crash).
 */
const RULES: readonly Rule[] = [
  {
    level: 'info',
    reason: 'a consumer-group rebalance is routine; kafkajs rejoins the group itself',
    matches: (_ns, message, fields) => /rebalanc/i.test(`${message} ${String(fields.error ?? '')}`),
  },
  {
    level: 'warn',
    reason: 'kafkajs retries the operation (the line carries retryCount / retryTime)',
    matches: (_ns, _message, fields) => fields.retryCount !== undefined || fields.retryTime !== undefined,
  },
  {
    level: 'warn',
    reason: 'connection errors are retried by kafkajs; the transports report a lasting outage as such',
    matches: (ns) => ns === 'Connection' || ns === 'BrokerPool',
  },
  {
    level: 'debug',
    reason: "kafkajs 2's notice about its default partitioner, printed on every producer",
    matches: (_ns, message) => /default partitioner/i.test(message),
  },
];

/** The ferry log method for one kafkajs line. */
export function kafkajsLogMethod(entry: Pick<LogEntry, 'namespace' | 'level' | 'log'>): LogMethod {
  const original = BY_LEVEL[entry.level] ?? 'debug';
  const { message, ...fields } = entry.log;
  const rule = RULES.find((r) => r.matches(entry.namespace, message, fields));
  return rule && RANK[rule.level] < RANK[original] ? rule.level : original;
}
