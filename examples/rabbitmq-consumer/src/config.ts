/** Injection token of the ExampleConfig in the Nest modules. */
export const EXAMPLE_CONFIG = Symbol('EXAMPLE_CONFIG');

/** Where the example runs; every URL can be overridden from the environment. */
export interface ExampleConfig {
  readonly databaseUrl: string;
  readonly amqpUrl: string;
  readonly queue: string;
  readonly tenant: string;
}

export function exampleConfig(env: NodeJS.ProcessEnv = process.env): ExampleConfig {
  const databaseUrl = new URL(env.FERRY_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test');
  databaseUrl.pathname = `/${env.FERRY_EXAMPLE_DATABASE ?? 'ferry_ex_rabbitmq_consumer'}`;
  const runId = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  return {
    databaseUrl: databaseUrl.toString(),
    amqpUrl: env.FERRY_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
    queue: `ferry.ex.rabbitmq-consumer.${runId}`,
    tenant: 'acme',
  };
}
