import { FerryConfigError, type Logger } from '@ferry/core';
import {
  guardLogger,
  defaultLogger,
  timerOption,
  knownKeysOption,
  nonEmptyOption as nonEmpty,
  oneOfOption,
  received,
  requiredOptions,
  type OptionKeys,
  loggerOption,
} from '@ferry/core/transport';
import type { KafkaClientName } from './client/types';

/**
 * The connection's options, defaults and resolver. Their own file so that connection.ts, the
 * client drivers (client/*) and options.ts all import them without importing each other.
 */

/** The connection's rows of the DEFAULTS table (options.ts spreads them into it). */
export const CONNECTION_DEFAULTS = {
  client: 'kafkajs',
  clientId: 'ferry',
  connectionTimeoutMs: 3_000,
  requestTimeoutMs: 30_000,
  kafkaLogLevel: 'error',
} as const;

export type KafkaLogLevel = 'nothing' | 'error' | 'warn' | 'info' | 'debug';

export interface ConnectionOptions {
  /** `host:port` of one or more brokers. Required. */
  brokers: readonly string[];
  /**
   * The client library: `'kafkajs'` (default) or `'platformatic'` (@platformatic/kafka 1.x,
   * Node 20.19.4 or later). Every other option means the same for both.
   */
  client?: KafkaClientName;
  clientId?: string;
  connectionTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** Level at which kafkajs's own log lines are passed on to `logger`. */
  kafkaLogLevel?: KafkaLogLevel;
  logger?: Logger;
  /**
   * Passed to the client unchanged (TLS / SASL): kafkajs's KafkaConfig, e.g. `{ ssl: true,
   * sasl: {...} }`, or @platformatic/kafka's client options, e.g. `{ tls: {...}, sasl: {...} }`.
   * kafkajs's `retry` waits are bounded by a quarter of each publisher's and consumer's
   * closeTimeoutMs (so that its close() can wait out a retry pending).
   */
  kafkaConfig?: Readonly<Record<string, unknown>>;
}

export interface ResolvedConnectionOptions {
  readonly brokers: readonly string[];
  readonly client: KafkaClientName;
  readonly clientId: string;
  readonly connectionTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly kafkaLogLevel: KafkaLogLevel;
  readonly logger: Logger;
  readonly kafkaConfig: Readonly<Record<string, unknown>>;
}

const CONNECTION_KEYS = {
  brokers: true,
  client: true,
  clientId: true,
  connectionTimeoutMs: true,
  requestTimeoutMs: true,
  kafkaLogLevel: true,
  logger: true,
  kafkaConfig: true,
} as const satisfies OptionKeys<ConnectionOptions>;

const LOG_LEVELS: readonly KafkaLogLevel[] = ['nothing', 'error', 'warn', 'info', 'debug'];
const CLIENTS: readonly KafkaClientName[] = ['kafkajs', 'platformatic'];

export function resolveConnectionOptions(options: ConnectionOptions): ResolvedConnectionOptions {
  requiredOptions(options, 'brokers');
  options = knownKeysOption('', options, CONNECTION_KEYS);
  if (!Array.isArray(options.brokers) || options.brokers.length === 0) {
    throw new FerryConfigError(
      'brokers',
      `must be a non-empty array of host:port strings, got ${received(options.brokers)}`,
    );
  }
  options.brokers.forEach((broker, index) => {
    if (typeof broker !== 'string' || !/^[^\s:]+:\d+$/.test(broker)) {
      throw new FerryConfigError(`brokers[${index}]`, `must be a host:port string, got ${received(broker)}`);
    }
  });
  return {
    brokers: [...options.brokers],
    client: oneOfOption('client', options.client ?? CONNECTION_DEFAULTS.client, CLIENTS),
    clientId: nonEmpty('clientId', options.clientId ?? CONNECTION_DEFAULTS.clientId),
    connectionTimeoutMs: timerOption(
      'connectionTimeoutMs',
      options.connectionTimeoutMs ?? CONNECTION_DEFAULTS.connectionTimeoutMs,
      1,
    ),
    requestTimeoutMs: timerOption(
      'requestTimeoutMs',
      options.requestTimeoutMs ?? CONNECTION_DEFAULTS.requestTimeoutMs,
      1,
    ),
    kafkaLogLevel: oneOfOption(
      'kafkaLogLevel',
      options.kafkaLogLevel ?? CONNECTION_DEFAULTS.kafkaLogLevel,
      LOG_LEVELS,
    ),
    logger: guardLogger(loggerOption('logger', options.logger) ?? defaultLogger('ferry.kafka')),
    kafkaConfig: kafkaConfigOption(options.kafkaConfig),
  };
}

/** Passed to the client as it is; only its shape is ferry's to check. */
function kafkaConfigOption(value: unknown): Readonly<Record<string, unknown>> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new FerryConfigError('kafkaConfig', `must be an object, got ${received(value)}`);
  }
  return value as Readonly<Record<string, unknown>>;
}

/**
 * The least `maxWaitTimeMs`: the fetch long-poll. At 0 the broker answers an empty fetch at once
 * and the fetch loop spins on an idle topic (a core busy and requests without end).
 */
export const MIN_MAX_WAIT_TIME_MS = 100;
