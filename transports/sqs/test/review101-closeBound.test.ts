/**
 * Review 101: close() of an SQS consumer waits for the batch in hand: its acceptance (as long as
 * PostgreSQL takes: a lock another session holds on the inbox table, for ever with an acceptor
 * without a statement timeout), then its deletes (each step up to the visibility timeout, 30 s by
 * default, when SQS stops answering). close() settles within `closeTimeoutMs` (as Kafka's and
 * RabbitMQ's), aborts the consumer's requests in flight, reports `disconnected` (closed) once and
 * nothing after it, and loses nothing: a message not deleted comes back after its visibility
 * timeout and is answered as a duplicate once its acceptance committed.
 */
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { SqsPublisher, attachSqsConsumer, type SqsConsumer } from '@ferry/sqs';
import { TcpProxy } from '../../../fault-tests/harness/tcpProxy';
import { outcomeWithin } from '../../../test-support/deadlines';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';
import { lockTable } from '../../../test-support/rowLocks';
import type { PgTestAcceptor } from '../../../test-support/pgAcceptor';
import { useSqsConsumerFixture } from './support/consumerFixture';
import {
  SQS_ENDPOINT,
  neverAborted,
  outboxMessages,
  proxiedConnection,
  receiveNone,
  uniqueName,
  waitFor,
} from './support/sqs';

failOnUnhandledRejections();
jest.setTimeout(90_000);

const CLOSE_TIMEOUT_MS = 500;
/** Far beyond closeTimeoutMs, well short of the 20 s visibility timeout of the silent deletes case. */
const CLOSE_WITHIN_MS = 12_000;

const fixture = useSqsConsumerFixture();
let proxy: TcpProxy;

beforeAll(async () => {
  const endpoint = new URL(SQS_ENDPOINT);
  proxy = await TcpProxy.start({ host: endpoint.hostname, port: Number(endpoint.port) });
});

afterAll(async () => {
  await proxy.close();
});

afterEach(async () => {
  await proxy.setMode('pass');
});

/** Attaches a consumer of `queueUrl` with its events; `proxied`: through the TCP proxy. */
function attach(
  acceptor: PgTestAcceptor,
  queueUrl: string,
  options: { visibilityTimeoutSeconds: number; proxied?: boolean },
): { consumer: SqsConsumer; events: TransportConsumerEvent[] } {
  const events: TransportConsumerEvent[] = [];
  const connection = options.proxied ? proxiedConnection(proxy) : fixture.connection;
  const consumer = attachSqsConsumer(acceptor, {
    connection,
    queueUrl: options.proxied ? proxy.urlFor(queueUrl) : queueUrl,
    consumer: 'r101',
    waitTimeSeconds: 1,
    visibilityTimeoutSeconds: options.visibilityTimeoutSeconds,
    extendEveryMs: 300,
    closeTimeoutMs: CLOSE_TIMEOUT_MS,
    observer: (event) => events.push(event),
  });
  fixture.consumers.push(consumer);
  if (options.proxied) {
    const close = consumer.close.bind(consumer);
    consumer.close = async () => {
      await close();
      await connection.close();
    };
  }
  return { consumer, events };
}

/** close() twice at once settles in time, and `closed` is reported once. */
async function expectBoundedClose(consumer: SqsConsumer, events: readonly TransportConsumerEvent[]) {
  const closed = await outcomeWithin(Promise.all([consumer.close(), consumer.close()]), CLOSE_WITHIN_MS);
  expect(closed).toEqual({ value: [undefined, undefined] });
  expect(events.filter((event) => event.type === 'disconnected' && event.retryInMs === null)).toEqual([
    expect.objectContaining({ reason: 'closed' }),
  ]);
}

/** A second consumer until every message is deleted: each stored once, the queue empty. */
async function drain(acceptor: PgTestAcceptor, queueUrl: string, ids: readonly string[]) {
  const { events } = attach(acceptor, queueUrl, { visibilityTimeoutSeconds: 2 });
  await waitFor(
    'the messages back and deleted',
    () =>
      events.reduce((n, e) => n + (e.type === 'settled' ? e.count : 0), 0) >= ids.length ? true : undefined,
    60_000,
  );
  expect((await acceptor.storedIds()).sort()).toEqual([...ids].sort());
  expect(await receiveNone(fixture.connection, queueUrl)).toEqual([]);
}

test('close() while the batch in hand waits on a locked inbox table settles within closeTimeoutMs; the batch comes back and is stored once', async () => {
  const acceptor = await fixture.freshAcceptor();
  const { queueUrl } = await fixture.queues.declare({ name: uniqueName('r101-lock') });
  const lock = await lockTable(fixture.database.url, 'test_inbox');
  try {
    const messages = outboxMessages(2, queueUrl);
    await new SqsPublisher(fixture.connection).publish(messages, neverAborted());
    const { consumer, events } = attach(acceptor, queueUrl, { visibilityTimeoutSeconds: 2 });
    await waitFor('the batch in acceptance', () => (acceptor.seen.length >= 2 ? true : undefined));

    await expectBoundedClose(consumer, events);
    const after = events.length;
    // The acceptance goes on once the table is free; the closed consumer deletes nothing.
    await lock.end();
    await waitFor('the batch stored', async () =>
      (await acceptor.storedIds()).length >= 2 ? true : undefined,
    );
    await drain(
      acceptor,
      queueUrl,
      messages.map((m) => m.id),
    );
    expect(events.slice(after)).toEqual([]);
  } finally {
    await lock.end();
  }
});

test('close() while SQS does not answer the deletes of an accepted batch settles within closeTimeoutMs; the batch comes back and is stored once', async () => {
  const acceptor = await fixture.freshAcceptor();
  const { queueUrl } = await fixture.queues.declare({ name: uniqueName('r101-silent') });
  const messages = outboxMessages(2, queueUrl);
  await new SqsPublisher(fixture.connection).publish(messages, neverAborted());
  // SQS stops answering as soon as the batch is stored: its deletes go unanswered.
  const accept = acceptor.acceptMany.bind(acceptor);
  acceptor.acceptMany = async (batch) => {
    const results = await accept(batch);
    await proxy.setMode('blackhole');
    return results;
  };
  const { consumer, events } = attach(acceptor, queueUrl, { visibilityTimeoutSeconds: 20, proxied: true });
  await waitFor('SQS silent after the acceptance', () => (proxy.mode === 'blackhole' ? true : undefined));

  await expectBoundedClose(consumer, events);
  const after = events.length;
  await proxy.setMode('pass');
  acceptor.acceptMany = accept;
  await drain(
    acceptor,
    queueUrl,
    messages.map((m) => m.id),
  );
  expect(events.slice(after)).toEqual([]);
});
