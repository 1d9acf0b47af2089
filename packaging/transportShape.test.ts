/**
 * Every transport has one shape, checked on the built packages (dist/, loaded by plain Node as
 * an application loads them; transportShape.probe.js reports what it finds): a synchronous
 * `attach*Consumer(acceptor, options)` returning `{ ready, check, close }` (check before the
 * consumer attached: ConsumerDisconnectedError; close twice: one promise; ready and check after
 * close: FERRY_CLOSED), a publisher class built `new *Publisher(connection,
 * options)`, and the same option names for the same ideas, read from each options check's list
 * of known keys. The in-memory transport of @ferry/testing has the consumer shape too.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './workspaces';

jest.setTimeout(120_000);

type Keys = string[] | { unexpected: string };

interface TransportReport {
  exports: string[];
  attach: {
    returnsThenable: boolean;
    ready: string;
    check: string;
    close: string;
    checkBeforeAttach: string;
    closeSharesPromise: boolean;
    readyAfterClose: string;
    checkAfterClose: string;
  };
  consumerKeys: Keys;
  connectionKeys?: Keys;
  publisher?: { isClass: boolean; arity: number; keys: Keys };
}

const BROKERS = {
  rabbitmq: { attach: 'attachRabbitConsumer', publisher: 'RabbitPublisher', connection: 'RabbitConnection' },
  kafka: { attach: 'attachKafkaConsumer', publisher: 'KafkaPublisher', connection: 'KafkaConnection' },
  sqs: { attach: 'attachSqsConsumer', publisher: 'SqsPublisher', connection: 'SqsConnection' },
} as const;

/** One name per idea, on every consumer (the in-memory one reads a `broker` instead of a connection). */
const CONSUMER_IDEAS = [
  'consumer',
  'maxBatchSize',
  'retryBackoff',
  'identity',
  'tenant',
  'logger',
  'observer',
  'random',
];
/** The same on the three brokers' consumers. */
const BROKER_CONSUMER_IDEAS = ['connection', 'deadLetter'];
/** One name per idea, on every publisher. */
const PUBLISHER_IDEAS = ['routes', 'defaultDestination', 'confirmTimeoutMs', 'logger', 'observer'];
/** Names the transports used for those ideas before they were aligned; none may come back. */
const RETIRED = [
  'onEvent',
  'batchSize',
  'maxAcceptBatch',
  'maxMessages',
  'restartBackoff',
  'pollErrorBackoff',
  'reconnect',
  'deadLetterTopic',
  'deadLetterExchange',
  'deadLetterQueue',
  'deadLetterRetries',
  'defaultExchange',
  'defaultTopic',
  'defaultQueue',
  'sendTimeoutMs',
];

let report: Record<string, TransportReport>;

beforeAll(() => {
  execFileSync('npx', ['tsc', '-b'], { cwd: ROOT, stdio: 'pipe' });
  const out = execFileSync(process.execPath, [path.join(__dirname, 'transportShape.probe.js')], {
    cwd: ROOT,
    encoding: 'utf8',
    // The AWS SDK warns on stderr about Node 20's support window; the report is stdout alone.
    env: { ...process.env, FERRY_LOG_LEVEL: 'silent', NODE_NO_WARNINGS: '1' },
  });
  report = JSON.parse(out) as Record<string, TransportReport>;
});

function keys(of: Keys | undefined): string[] {
  if (!Array.isArray(of)) throw new Error(`no list of known keys: ${JSON.stringify(of)}`);
  return of;
}

describe.each(['rabbitmq', 'kafka', 'sqs', 'memory'])('the built %s transport', (name) => {
  it('attaches synchronously and returns { ready, check, close }: check down before it attached, close twice is one promise, ready and check after it FERRY_CLOSED', () => {
    expect(report[name]!.attach).toEqual({
      returnsThenable: false,
      ready: 'function',
      check: 'function',
      close: 'function',
      checkBeforeAttach: 'ConsumerDisconnectedError FERRY_TRANSPORT_ERROR',
      closeSharesPromise: true,
      readyAfterClose: 'FERRY_CLOSED',
      checkAfterClose: 'FERRY_CLOSED',
    });
  });

  it('names the shared consumer ideas alike and none of the retired names', () => {
    const known = keys(report[name]!.consumerKeys);
    const ideas = name === 'memory' ? CONSUMER_IDEAS : [...CONSUMER_IDEAS, ...BROKER_CONSUMER_IDEAS];
    expect(ideas.filter((idea) => !known.includes(idea))).toEqual([]);
    expect(known.filter((key) => RETIRED.includes(key))).toEqual([]);
  });
});

describe.each(Object.entries(BROKERS))('the built %s package', (name, names) => {
  it('exports its attach function, publisher class and connection by the one naming scheme', () => {
    expect(report[name]!.exports).toEqual(
      expect.arrayContaining([names.attach, names.publisher, names.connection]),
    );
  });

  it('builds its publisher as new Publisher(connection, options), with the shared option names', () => {
    const publisher = report[name]!.publisher!;
    expect(publisher.isClass).toBe(true);
    const known = keys(publisher.keys);
    expect(PUBLISHER_IDEAS.filter((idea) => !known.includes(idea))).toEqual([]);
    expect(known.filter((key) => RETIRED.includes(key))).toEqual([]);
  });

  it('waits reconnectBackoff between attempts to reach its broker (on the consumer, or on the shared connection)', () => {
    const known = [...keys(report[name]!.consumerKeys), ...keys(report[name]!.connectionKeys)];
    expect(known).toContain('reconnectBackoff');
    expect(known.filter((key) => RETIRED.includes(key))).toEqual([]);
  });
});

it('gives every publisher constructor the same arity: (connection, options = {})', () => {
  const arities = Object.keys(BROKERS).map((name) => report[name]!.publisher!.arity);
  expect(new Set(arities).size).toBe(1);
  expect(arities[0]).toBe(1);
});
