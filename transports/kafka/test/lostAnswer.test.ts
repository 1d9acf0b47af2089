/**
 * A send whose answer is lost: the broker wrote its records, but the producer never heard back
 * and reported them not sent. An idempotent producer then numbers its next records as it had
 * numbered the lost answer's, and the broker takes a next batch of as many records for a
 * duplicate of the written one: it acknowledges it and drops it, and the publisher reports
 * `sent` records that are nowhere. Here a proxy between kafkajs and the broker lets requests
 * through and drops every answer (`mute`). kafkajs only: it lets the application open the
 * broker sockets (`socketFactory`); @platformatic/kafka connects to the addresses the brokers
 * advertise, which a proxy cannot stand between.
 *
 * The next send after such a failure goes out on a new producer (SequencedSends); the last two
 * cases are that new producer's connect refused (the broker down) and the publisher closed
 * while it connects.
 */
import { connect } from 'node:net';
import { FERRY_HEADERS, type OutboxMessage } from '@ferry/core';
import { KafkaConnection, KafkaPublisher, deleteTopics, ensureTopics } from '../src';
import { TcpProxy } from '../../../fault-tests/harness/tcpProxy';
import {
  brokers,
  outboxMessage,
  readBack,
  silentLogger,
  testConnection,
  uniqueName,
  waitFor,
} from './support';

const admin = testConnection();
const never = new AbortController().signal;
let proxy: TcpProxy;
const topic = uniqueName('lost-answer');
const renewalTopic = uniqueName('lost-answer-renewal');

beforeAll(async () => {
  const [host, port] = brokers()[0]!.split(':');
  proxy = await TcpProxy.start({ host: host!, port: Number(port) });
  await ensureTopics(admin, [
    { topic, partitions: 1 },
    { topic: renewalTopic, partitions: 1 },
  ]);
});

afterAll(async () => {
  await proxy.close();
  await deleteTopics(admin, [topic, renewalTopic]);
});

afterEach(async () => {
  await proxy.setMode('pass');
});

/** A publisher whose every broker socket goes through the proxy, whatever address the metadata gives. */
function proxiedPublisher(destination = topic, confirmTimeoutMs?: number): KafkaPublisher {
  const connection = new KafkaConnection({
    brokers: brokers(),
    client: 'kafkajs',
    clientId: 'ferry-lost-answer',
    kafkaLogLevel: 'nothing',
    logger: silentLogger,
    connectionTimeoutMs: 1_000,
    requestTimeoutMs: 1_500,
    kafkaConfig: {
      socketFactory: ({ onConnect }: { onConnect: () => void }) =>
        connect(proxy.port, '127.0.0.1', onConnect),
    },
  });
  return new KafkaPublisher(connection, {
    defaultDestination: destination,
    producerRetries: 1,
    ...(confirmTimeoutMs === undefined ? {} : { confirmTimeoutMs }),
  });
}

const statuses = async (publisher: KafkaPublisher, messages: OutboxMessage[]): Promise<Set<string>> =>
  new Set((await publisher.publish(messages, never)).map((outcome) => outcome.status));

const batch = (label: string): OutboxMessage[] =>
  Array.from({ length: 10 }, (_, index) => outboxMessage({ payload: { label, index } }));

test('after a send whose answer was lost, the next send of as many records is not dropped as its duplicate', async () => {
  const publisher = proxiedPublisher();
  const [first, unanswered, next] = [batch('first'), batch('unanswered'), batch('next')];
  try {
    const sent = async (messages: OutboxMessage[]) =>
      (await publisher.publish(messages, never)).map((outcome) => outcome.status);
    expect(new Set(await sent(first))).toEqual(new Set(['sent']));
    await proxy.setMode('mute');
    expect((await sent(unanswered)).filter((status) => status === 'sent')).toEqual([]);
    await proxy.setMode('pass');
    expect(new Set(await sent(next))).toEqual(new Set(['sent']));
  } finally {
    await publisher.close();
  }

  // The unanswered batch was written all the same (at least once); every batch is in the topic.
  const records = await readBack(admin, topic, 30).catch((error: Error) => {
    throw new Error(`${error.message}: a batch reported sent is not in the topic`);
  });
  const read = new Set(records.map((record) => record.headers[FERRY_HEADERS.messageId]));
  expect({
    first: first.filter((message) => !read.has(message.id)).length,
    unanswered: unanswered.filter((message) => !read.has(message.id)).length,
    next: next.filter((message) => !read.has(message.id)).length,
  }).toEqual({ first: 0, unanswered: 0, next: 0 });
}, 90_000);

test('a send the broker does not answer by confirmTimeoutMs (before the client gives up on it) is unavailable: no attempt spent', async () => {
  // confirmTimeoutMs 1 s, the client's request timeout 1.5 s: ferry's deadline comes first, as it
  // does with the defaults (both 30 s, ferry's counted from before the request was sent).
  const publisher = proxiedPublisher(renewalTopic, 1_000);
  try {
    expect(await statuses(publisher, batch('u-first'))).toEqual(new Set(['sent']));
    await proxy.setMode('mute');
    const outcomes = await publisher.publish(batch('u-unanswered'), never);
    expect(new Set(outcomes.map((outcome) => outcome.status))).toEqual(new Set(['unavailable']));
    expect(outcomes[0]).toMatchObject({ error: expect.stringMatching(/did not answer/) });
  } finally {
    await proxy.setMode('pass');
    await publisher.close();
  }
}, 90_000);

test('a new producer that cannot connect (broker refusing) leaves the batch unavailable; once the broker is back, every batch is in the topic and no connection is left open', async () => {
  const publisher = proxiedPublisher(renewalTopic);
  const [first, unanswered, refused, next] = [
    batch('r-first'),
    batch('r-unanswered'),
    batch('r-refused'),
    batch('r-next'),
  ];
  try {
    expect(await statuses(publisher, first)).toEqual(new Set(['sent']));
    await proxy.setMode('mute');
    expect(await statuses(publisher, unanswered)).toEqual(new Set(['unavailable']));
    // The next send starts a new producer, whose connect is refused: no attempt spent.
    await proxy.setMode('refuse');
    expect(await statuses(publisher, refused)).toEqual(new Set(['unavailable']));
    await proxy.setMode('pass');
    const [again, after] = await Promise.all([statuses(publisher, refused), statuses(publisher, next)]);
    expect({ again, after }).toEqual({ again: new Set(['sent']), after: new Set(['sent']) });
  } finally {
    await publisher.close();
  }
  await waitFor(
    () => proxy.openConnections === 0,
    () => `${proxy.openConnections} connections open after close()`,
  );
  const records = await readBack(admin, renewalTopic, 40);
  const read = new Set(records.map((record) => record.headers[FERRY_HEADERS.messageId]));
  const missing = (messages: OutboxMessage[]) => messages.filter((message) => !read.has(message.id)).length;
  expect([first, unanswered, refused, next].map(missing)).toEqual([0, 0, 0, 0]);
}, 90_000);

test('close() while the new producer connects: the publish is not sent, the connect ends, nothing reconnects', async () => {
  const publisher = proxiedPublisher(renewalTopic);
  expect(await statuses(publisher, batch('c-first'))).toEqual(new Set(['sent']));
  await proxy.setMode('mute');
  expect(await statuses(publisher, batch('c-unanswered'))).toEqual(new Set(['unavailable']));
  // The broker now takes connections and never answers: the new producer's connect hangs.
  await proxy.setMode('blackhole');
  const accepted = proxy.accepted;
  const publishing = publisher.publish(batch('c-pending'), never);
  await waitFor(
    () => proxy.accepted > accepted,
    () => 'the new producer did not connect',
  );
  await publisher.close();
  // Ended by close(): the cluster out of reach, no attempt spent.
  expect(new Set((await publishing).map((outcome) => outcome.status))).toEqual(new Set(['unavailable']));
  await proxy.setMode('pass');
  await waitFor(
    () => proxy.openConnections === 0,
    () => `${proxy.openConnections} connections open after close()`,
  );
  const afterClose = proxy.accepted;
  // A reconnect after close() would open a connection; a publish after close() sends nothing.
  expect(await statuses(publisher, batch('c-late'))).toEqual(new Set(['unavailable']));
  expect(proxy.accepted).toBe(afterClose);
}, 90_000);

test('a broker that stops answering (blackhole) spends no attempt after the first timeout: its reconnects are unavailable', async () => {
  // The first publish times out (unavailable too: the cluster did not answer). The producer then
  // disconnects, and every reconnect fails ("Broker not connected" from kafkajs): a cluster that
  // cannot be reached, which must not spend the events' attempts one by one until they are FAILED.
  const publisher = proxiedPublisher(topic, 3_000);
  const during: string[] = [];
  try {
    expect(await statuses(publisher, batch('before'))).toEqual(new Set(['sent']));
    await proxy.setMode('blackhole');
    await publisher.publish(batch('first timeout'), never);
    for (let round = 0; round < 4; round += 1) {
      for (const outcome of await publisher.publish(batch(`blackhole ${round}`), never)) {
        during.push(`${outcome.status}${'error' in outcome ? `: ${outcome.error}` : ''}`);
      }
    }
    await proxy.setMode('pass');
    await waitFor(
      async () => (await statuses(publisher, batch('after'))).has('sent'),
      () => 'the broker to take sends again',
      30_000,
    );
  } finally {
    await publisher.close();
  }
  expect(during.filter((line) => !line.startsWith('unavailable'))).toEqual([]);
}, 120_000);
