import { FerryConfigError } from '@ferry/core';

/** Injection token of the ExampleConfig in the Nest modules. */
export const EXAMPLE_CONFIG = Symbol('EXAMPLE_CONFIG');

/** Where the example runs; every URL can be overridden from the environment. */
export interface ExampleConfig {
  readonly databaseUrl: string;
  readonly kafkaBrokers: readonly string[];
  readonly topic: string;
  readonly readerGroup: string;
  readonly tenant: string;
}

/** The example's settings from `env` (an empty variable read as unset); a malformed URL is FERRY_CONFIG_INVALID. */
export function exampleConfig(env: NodeJS.ProcessEnv = process.env): ExampleConfig {
  const serverUrl = env.FERRY_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/test';
  // Refused naming its variable, never echoed (it may carry a password): `new URL` threw a bare
  // TypeError with the whole text in it.
  if (!URL.canParse(serverUrl)) {
    throw new FerryConfigError(
      'FERRY_DATABASE_URL',
      'is not a URL postgresql://[user[:password]@]host[:port]/db',
    );
  }
  const databaseUrl = new URL(serverUrl);
  databaseUrl.pathname = `/${env.FERRY_EXAMPLE_DATABASE || 'ferry_ex_outbox_to_kafka'}`;
  const runId =
    env.FERRY_EXAMPLE_RUN_ID || `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  return {
    databaseUrl: databaseUrl.toString(),
    kafkaBrokers: (env.FERRY_KAFKA_BROKERS ?? '127.0.0.1:9092').split(','),
    topic: `ferry.ex.order-events.${runId}`,
    readerGroup: `ferry-ex-readback-${runId}`,
    tenant: 'acme',
  };
}
