import { FerryConfigError } from '@ferry/core';
import { MAX_TIMER_MS } from '@ferry/core/transport';

/** What the demo offers and where it runs; every URL can be overridden from the environment. */
export interface DemoConfig {
  readonly orders: number;
  readonly duplicates: number;
  readonly invalid: number;
  readonly customers: number;
  readonly tenant: string;
  readonly databaseUrl: string;
  readonly amqpUrl: string;
  readonly kafkaBrokers: readonly string[];
  readonly deadlineMs: number;
  readonly runId: string;
  /** Port of the demo's /metrics endpoint; 0 (the default) takes any free port. */
  readonly metricsPort: number;
}

/**
 * The demo's settings from `env` (an empty variable read as unset). A malformed one is refused
 * here, naming its variable (review 109: Number() made `FERRY_DEMO_ORDERS=abc` NaN, and the demo
 * failed far from the cause), and a FERRY_DATABASE_URL that does not parse (never echoed: it may
 * carry a password).
 */
export function demoConfig(env: NodeJS.ProcessEnv = process.env): DemoConfig {
  const serverUrl = setting(env, 'FERRY_DATABASE_URL') ?? 'postgresql://postgres@127.0.0.1:5432/test';
  if (!URL.canParse(serverUrl)) {
    throw new FerryConfigError(
      'FERRY_DATABASE_URL',
      'is not a URL postgresql://[user[:password]@]host[:port]/db',
    );
  }
  const databaseUrl = new URL(serverUrl);
  databaseUrl.pathname = `/${setting(env, 'FERRY_DEMO_DATABASE') ?? 'ferry_demo'}`;
  return {
    orders: wholeNumber(env, 'FERRY_DEMO_ORDERS', 400, 1),
    duplicates: wholeNumber(env, 'FERRY_DEMO_DUPLICATES', 40, 0),
    invalid: 12,
    customers: 25,
    tenant: 'acme',
    databaseUrl: databaseUrl.toString(),
    amqpUrl: setting(env, 'FERRY_AMQP_URL') ?? 'amqp://guest:guest@127.0.0.1:5672',
    kafkaBrokers: (setting(env, 'FERRY_KAFKA_BROKERS') ?? '127.0.0.1:9092').split(','),
    deadlineMs: wholeNumber(env, 'FERRY_DEMO_DEADLINE_MS', 120_000, 1, MAX_TIMER_MS),
    runId: Date.now().toString(36),
    metricsPort: wholeNumber(env, 'FERRY_DEMO_METRICS_PORT', 0, 0, 65_535),
  };
}

/** `env[name]`, an empty value read as unset (a shell's `VAR=`). */
function setting(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** The whole number (digits only) in `env[name]` from `min` to `max`, else `fallback` when unset. */
function wholeNumber(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const text = setting(env, name);
  if (text === undefined) return fallback;
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (value >= min && value <= max) return value;
  throw new FerryConfigError(
    name,
    `must be a whole number from ${min} to ${max}, got ${JSON.stringify(text)}`,
  );
}
