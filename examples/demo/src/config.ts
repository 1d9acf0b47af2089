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

export function demoConfig(env: NodeJS.ProcessEnv = process.env): DemoConfig {
  const serverUrl = env.FERRY_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';
  const databaseUrl = new URL(serverUrl);
  databaseUrl.pathname = `/${env.FERRY_DEMO_DATABASE ?? 'ferry_demo'}`;
  return {
    orders: Number(env.FERRY_DEMO_ORDERS ?? 400),
    duplicates: Number(env.FERRY_DEMO_DUPLICATES ?? 40),
    invalid: 12,
    customers: 25,
    tenant: 'acme',
    databaseUrl: databaseUrl.toString(),
    amqpUrl: env.FERRY_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
    kafkaBrokers: (env.FERRY_KAFKA_BROKERS ?? '127.0.0.1:9092').split(','),
    deadlineMs: Number(env.FERRY_DEMO_DEADLINE_MS ?? 120_000),
    runId: Date.now().toString(36),
    metricsPort: Number(env.FERRY_DEMO_METRICS_PORT ?? 0),
  };
}
