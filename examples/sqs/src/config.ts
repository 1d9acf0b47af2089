/** Where the example runs; every URL can be overridden from the environment. */
export interface ExampleConfig {
  readonly databaseUrl: string;
  readonly sqsEndpoint: string;
  readonly queue: string;
  readonly tenant: string;
}

export function exampleConfig(env: NodeJS.ProcessEnv = process.env): ExampleConfig {
  const databaseUrl = new URL(env.FERRY_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test');
  databaseUrl.pathname = `/${env.FERRY_EXAMPLE_DATABASE ?? 'ferry_ex_sqs'}`;
  const runId = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  return {
    databaseUrl: databaseUrl.toString(),
    sqsEndpoint: env.FERRY_SQS_ENDPOINT ?? 'http://127.0.0.1:9324',
    queue: `ferry-ex-orders-${runId}`,
    tenant: 'acme',
  };
}
