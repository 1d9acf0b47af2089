/**
 * Docs as tests: builds one application from the published tarballs alone (offline, from the npm
 * cache) out of every README's quick-start files, type-checks them with one tsc, runs `ferry
 * migrate` from node_modules, then RUNS each README's program against the real PostgreSQL,
 * RabbitMQ, Kafka and SQS endpoint, as a short-lived node process, and checks what it did.
 * A snippet that drifts from the packages fails here.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Consumer } from 'kafkajs';
import { workQueueNames } from '@ferry/rabbitmq';
import { closedPort } from '../test-support/closedPort';
import { adminQuery, scratchDatabaseUrl } from '../test-support/database';
import { parsePrometheusText } from '../test-support/prometheusText';
import { AppProcess, appEnv, eventually, runIn } from './appProcess';
import {
  amqpUrl,
  collectTopic,
  createTopic,
  deleteKafka,
  deleteRabbit,
  deleteSqs,
  kafkaBrokers,
  publishRabbit,
  receipts,
  rowsOf,
  sendSqs,
  type KafkaRecord,
} from './brokers';
import { quickstartCommands, quickstartFiles, quickstartScrape } from './snippets';
import { installOffline, packWorkspaces, writeApplication } from './tempApp';
import { ROOT } from './workspaces';

jest.setTimeout(120_000);

const CORE_README = 'packages/core/README.md';
const TESTING_README = 'packages/testing/README.md';
const CLI_README = 'packages/cli/README.md';
/** READMEs whose quick-start files go into the application (type-checked together). */
const READMES = [
  CORE_README,
  'packages/nestjs/README.md',
  'transports/rabbitmq/README.md',
  'transports/kafka/README.md',
  'transports/sqs/README.md',
  TESTING_README,
  CLI_README,
];

const suffix = randomBytes(4).toString('hex');
const databaseUrl = scratchDatabaseUrl('ferry_quickstart');
const databaseName = new URL(databaseUrl).pathname.slice(1);
const names = {
  coreQueue: `ferry-qs-orders-${suffix}`,
  coreTopic: `ferry-qs-invoices-${suffix}`,
  rabbitQueue: `ferry-qs-billing-${suffix}`,
  rabbitExchange: `ferry-qs-orders-${suffix}`,
  kafkaTopic: `ferry-qs-kafka-${suffix}`,
  kafkaGroup: `ferry-qs-billing-${suffix}`,
  sqsQueue: `ferry-qs-sqs-${suffix}`,
  nestTopic: `ferry-qs-nest-${suffix}`,
};
const testGroups: string[] = [];

/** Every README's `npm install` lines together make the application's dependencies. */
function dependencies(): { dependencies: string[]; devDependencies: string[] } {
  const installs = READMES.flatMap((readme) => quickstartCommands(readme, 'commands')).filter(
    ([npm, verb]) => npm === 'npm' && verb === 'install',
  );
  const listed = (dev: boolean) => [
    ...new Set(
      installs
        .filter((line) => line.includes('--save-dev') === dev)
        .flatMap((line) => line.slice(2).filter((word) => !word.startsWith('--'))),
    ),
  ];
  return { dependencies: listed(false), devDependencies: listed(true) };
}

describe('every README quick start, built from the tarballs and run against the real services', () => {
  const workDir = mkdtempSync(path.join(tmpdir(), 'ferry-quickstart-'));
  const appDir = path.join(workDir, 'app');
  const started: AppProcess[] = [];
  const consumers: Consumer[] = [];
  const env = (extra: Record<string, string> = {}) => appEnv({ DATABASE_URL: databaseUrl, ...extra });
  const run = (command: string[], extra?: Record<string, string>) => runIn(appDir, env(extra), command);
  const start = (file: string, extra: Record<string, string>) => {
    const program = new AppProcess(appDir, env(extra), ['node', file]);
    started.push(program);
    return program;
  };
  /** Collects a topic's records with a consumer group of the test's own. */
  const watch = async (topic: string) => {
    const records: KafkaRecord[] = [];
    const group = `ferry-qs-test-${topic}`;
    testGroups.push(group);
    consumers.push(await collectTopic(topic, group, records));
    return records;
  };

  beforeAll(async () => {
    mkdirSync(appDir);
    const install = dependencies();
    expect(install.dependencies).toEqual(expect.arrayContaining(['@ferry/core', '@ferry/cli']));
    writeApplication(appDir, packWorkspaces(), install);
    installOffline(appDir);
    for (const snippet of quickstartFiles(READMES)) {
      mkdirSync(path.dirname(path.join(appDir, snippet.file)), { recursive: true });
      writeFileSync(path.join(appDir, snippet.file), snippet.text);
    }
    await adminQuery(`CREATE DATABASE ${databaseName}`);
    const steps = quickstartCommands(CORE_README, 'commands').filter(
      ([npm, verb]) => !(npm === 'npm' && verb === 'install'),
    );
    expect(steps.map((command) => run(command)).join('\n')).toContain('ferry migrate: ');
    expect(run(['npx', 'ferry', 'check'])).toContain('schema is ready');
  }, 900_000);

  afterAll(async () => {
    for (const program of started) program.kill();
    for (const consumer of consumers) await consumer.disconnect();
    await adminQuery(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
    const rabbit = [workQueueNames({ queue: names.coreQueue }), workQueueNames({ queue: names.rabbitQueue })];
    await deleteRabbit(
      rabbit.flatMap((n) => [n.queue, n.deadLetterQueue, ...n.retryQueues]),
      [...rabbit.map((n) => n.deadLetterExchange), names.rabbitExchange],
    );
    await deleteKafka(
      [names.coreTopic, names.kafkaTopic, names.nestTopic],
      [names.kafkaGroup, ...testGroups],
    );
    await deleteSqs([names.sqsQueue, `${names.sqsQueue}-dlq`]);
    rmSync(workDir, { recursive: true, force: true });
  });

  it('cli: every quick-start command succeeds on the migrated database and says so', () => {
    const outputs = quickstartCommands(CLI_README, 'run').map((command) => {
      expect(command.slice(0, 2)).toEqual(['npx', 'ferry']);
      return run(command);
    });
    expect(outputs).toHaveLength(5);
    const [migrate, check, health, outbox, inbox] = outputs;
    expect(migrate).toMatch(/^ferry migrate: 0 applied, \d+ already applied$/m);
    expect(check).toContain('ferry check: schema is ready');
    expect(health).toMatch(/^up database: reachable$/m);
    expect(health).not.toMatch(/^down /m);
    expect(outbox).toMatch(/^total \d+$/m);
    expect(inbox).toMatch(/^COMPLETED \d+$/m);
  });

  it('core: an order published to RabbitMQ twice comes out of Kafka once as an invoice event', async () => {
    const [[node, file] = []] = quickstartCommands(CORE_README, 'run');
    expect(node).toBe('node');
    const metricsPort = await closedPort();
    const service = start(file as string, {
      AMQP_URL: amqpUrl,
      KAFKA_BROKERS: kafkaBrokers.join(','),
      ORDERS_QUEUE: names.coreQueue,
      INVOICES_TOPIC: names.coreTopic,
      METRICS_PORT: String(metricsPort),
    });
    await service.waitForLine('billing service ready', 60_000);
    const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    expect(service.text).toContain(`metrics on ${metricsUrl}`);
    const invoices = await watch(names.coreTopic);
    await publishRabbit('', names.coreQueue, { orderId: 7 }, { messageId: 'order-7', times: 2 });
    await eventually('the invoice event', 60_000, async () => invoices[0]);
    // Every line of both READMEs' scrape samples, with this run's queue, once the relay marked
    // the event SENT (the stats gauges are cached for up to 5 s).
    const sample = [...quickstartScrape(CORE_README), ...quickstartScrape('README.md')].map((line) =>
      line
        .replace('source="billing.orders"', `source="${names.coreQueue}"`)
        .replace('destination="invoices"', `destination="${names.coreTopic}"`),
    );
    expect(sample.length).toBeGreaterThan(5);
    let absent = sample;
    await eventually('the README scrape lines', 60_000, async () => {
      const text = await (await fetch(metricsUrl, { signal: AbortSignal.timeout(10_000) })).text();
      parsePrometheusText(text); // throws on a line that is not the text format
      const lines = new Set(text.split('\n'));
      absent = sample.filter((line) => !lines.has(line));
      return absent.length === 0 ? true : undefined;
    }).catch(() => undefined);
    expect(absent).toEqual([]);
    expect(await service.stop(30_000)).toEqual({ code: 0, signal: null });
    expect(service.text).toContain('billing service stopped');
    expect(invoices.map((r) => [r.headers['x-ferry-event-type'], r.payload])).toEqual([
      ['invoice.requested', { orderId: 7 }],
    ]);
    // Emitted inside the handler: correlation and causation inherited from the order, with no
    // @opentelemetry/api installed in this application.
    expect(invoices[0]?.headers['x-ferry-correlation-id']).toBe('order-7');
    expect(invoices[0]?.headers['x-ferry-causation-id']).toBe('order-7');
    const stats = run(['npx', 'ferry', 'inbox', 'stats', '--global', '--json']);
    expect(JSON.parse(stats)).toMatchObject({ total: 1 });
  });

  it('rabbitmq: a delivery routed through the bound exchange twice is handled once', async () => {
    const consumer = start('dist/src/rabbitmq-consumer.js', {
      ORDERS_QUEUE: names.rabbitQueue,
      ORDERS_EXCHANGE: names.rabbitExchange,
    });
    await consumer.waitForLine('rabbitmq consumer ready', 60_000);
    const body = { orderId: 'r-1' };
    await publishRabbit(names.rabbitExchange, 'order.created', body, { messageId: 'rabbit-1', times: 2 });
    const done = await eventually('the completed receipt', 60_000, async () => {
      const rows = await receipts(databaseUrl, 'billing', 'rabbit-1');
      return rows.some((row) => row.status === 'COMPLETED') ? rows : undefined;
    });
    expect(done.map((row) => [row.status, row.tenant_id])).toEqual([['COMPLETED', null]]);
    expect(await consumer.stop(30_000)).toEqual({ code: 0, signal: null });
    expect(consumer.text).toContain('rabbitmq consumer stopped');
  });

  it('kafka: the relay publishes the emitted event, and the consumer accepts it into the inbox', async () => {
    const topicEnv = { ORDERS_TOPIC: names.kafkaTopic, KAFKA_GROUP: names.kafkaGroup };
    const relay = start('dist/src/kafka-relay.js', topicEnv);
    await relay.waitForLine('relay started', 60_000);
    const records = await watch(names.kafkaTopic);
    const [record] = await eventually('the order.placed record', 60_000, async () =>
      records.length > 0 ? records : undefined,
    );
    expect(record).toMatchObject({
      key: 'customer-42',
      headers: { 'x-ferry-event-type': 'order.placed' },
      payload: { orderId: 7 },
    });
    expect(await relay.stop(30_000)).toEqual({ code: 0, signal: null });
    expect(relay.text).toContain('relay stopped');

    const consumer = start('dist/src/kafka-consumer.js', topicEnv);
    await consumer.waitForLine('kafka consumer ready', 60_000);
    const eventId = record?.headers['x-ferry-message-id'] as string;
    const [receipt] = await eventually('the receipt', 60_000, async () => {
      const rows = await receipts(databaseUrl, 'billing', eventId);
      return rows.length > 0 ? rows : undefined;
    });
    expect(receipt).toMatchObject({ message_type: 'order.placed', status: 'PENDING' });
    expect(await consumer.stop(30_000)).toEqual({ code: 0, signal: null });
    expect(consumer.text).toContain('kafka consumer stopped');
  });

  it('sqs: a message sent to the declared queue is accepted into the inbox and handled', async () => {
    const consumer = start('dist/src/sqs.js', { ORDERS_QUEUE: names.sqsQueue });
    await consumer.waitForLine('sqs consumer ready', 60_000);
    await sendSqs(names.sqsQueue, { orderId: 's-1' }, 'sqs-1');
    const rows = await eventually('the completed receipt', 60_000, async () => {
      const found = await receipts(databaseUrl, 'billing', 'sqs-1');
      return found.some((row) => row.status === 'COMPLETED') ? found : undefined;
    });
    expect(rows.map((row) => row.status)).toEqual(['COMPLETED']);
    await consumer.waitForLine('billing sqs-1', 30_000);
    expect(await consumer.stop(30_000)).toEqual({ code: 0, signal: null });
    expect(consumer.text).toContain('sqs consumer stopped');
  });

  it('nestjs: the placed order is relayed to Kafka with its tenant, and SIGTERM drains the app', async () => {
    // The topic exists before the app publishes (the snippet relies on the broker's auto-creation).
    await createTopic(names.nestTopic);
    const records = await watch(names.nestTopic);
    const app = start('dist/src/nest-app.js', { ORDERS_TOPIC: names.nestTopic });
    await app.waitForLine('nest app ready', 60_000);
    const [record] = await eventually('the order.placed record', 60_000, async () =>
      records.length > 0 ? records : undefined,
    );
    expect(record).toMatchObject({
      headers: { 'x-ferry-event-type': 'order.placed', 'x-ferry-tenant-id': 'acme' },
      payload: { orderId: 'order-7' },
    });
    // Nest's shutdown hooks close the application, then re-raise the signal.
    expect(await app.stop(30_000)).toMatchObject({ signal: 'SIGTERM' });
  });

  it('core transactions: handlers on node-postgres, Kysely and Prisma commit with their completion; emit joins a pg and a Kysely transaction', async () => {
    // A database of its own, so its PENDING events meet none of the other tests' relays.
    const url = scratchDatabaseUrl('ferry_quickstart_tx');
    const name = new URL(url).pathname.slice(1);
    await adminQuery(`CREATE DATABASE ${name}`);
    try {
      run(['npx', 'ferry', 'migrate'], { DATABASE_URL: url });
      const output = run(['node', 'dist/src/transactions.js'], {
        DATABASE_URL: url,
        INVOICES_TOPIC: names.coreTopic,
      });
      for (const consumer of ['billing-pg', 'billing-kysely', 'billing-prisma']) {
        expect(output).toContain(`${consumer}: completed 1`);
        expect((await receipts(url, consumer)).map((r) => r.status)).toEqual(['COMPLETED']);
      }
      expect(output).toContain('transactions example done');
      const orders = ['billing-kysely', 'billing-pg', 'billing-prisma', 'kysely-tx', 'pg-tx'].map(
        (o) => `order-${o}`,
      );
      const invoices = await rowsOf<{ order_id: string }>(url, 'SELECT order_id FROM invoices ORDER BY 1');
      expect(invoices.map((row) => row.order_id)).toEqual(orders);
      const events = await rowsOf<{ order_id: string; destination: string | null }>(
        url,
        `SELECT payload->>'orderId' AS order_id, destination FROM outbox_events ORDER BY 1`,
      );
      expect(events.map((row) => row.order_id)).toEqual(orders);
      // Review finding (failed first): run in the quick start's database, these events went to the
      // service's relay, whose publisher has no default destination: all FAILED, `ferry health` 1.
      // Each names the topic the service relays to (its INVOICES_TOPIC), so the relay sends them.
      expect(events.filter((row) => row.destination !== names.coreTopic)).toEqual([]);
    } finally {
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    }
  });

  it('@ferry/testing: the services test of the README passes', () => {
    const [command = []] = quickstartCommands(TESTING_README, 'run');
    const output = runIn(appDir, env({ FERRY_SERVICES_SCRIPT: path.join(ROOT, 'scripts/services') }), [
      ...command,
      '--ci',
      '--json',
    ]);
    const report = JSON.parse(output) as { numPassedTests: number; numFailedTests: number };
    expect(report).toMatchObject({ numPassedTests: 1, numFailedTests: 0 });
  });
});
