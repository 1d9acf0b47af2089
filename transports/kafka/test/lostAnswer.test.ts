/**
 * A send whose answer is lost: the broker wrote its records, but the producer never heard back
 * and reported them not sent. An idempotent producer then numbers its next records as it had
 * numbered the lost answer's, and the broker takes a next batch of as many records for a
 * duplicate of the written one: it acknowledges it and drops it, and the publisher reports
 * `sent` records that are nowhere. Here a proxy between kafkajs and the broker lets requests
 * through and drops every answer (`mute`). kafkajs only: it lets the application open the
 * broker sockets (`socketFactory`); @platformatic/kafka connects to the addresses the brokers
 * advertise, which a proxy cannot stand between.
 */
import { connect } from 'node:net';
import { FERRY_HEADERS, type OutboxMessage } from '@ferry/core';
import { KafkaConnection, KafkaPublisher, deleteTopics, ensureTopics } from '../src';
import { TcpProxy } from '../../../fault-tests/harness/tcpProxy';
import { brokers, outboxMessage, readBack, silentLogger, testConnection, uniqueName } from './support';

const admin = testConnection();
const never = new AbortController().signal;
let proxy: TcpProxy;
const topic = uniqueName('lost-answer');

beforeAll(async () => {
  const [host, port] = brokers()[0]!.split(':');
  proxy = await TcpProxy.start({ host: host!, port: Number(port) });
  await ensureTopics(admin, [{ topic, partitions: 1 }]);
});

afterAll(async () => {
  await proxy.close();
  await deleteTopics(admin, [topic]);
});

const batch = (label: string): OutboxMessage[] =>
  Array.from({ length: 10 }, (_, index) => outboxMessage({ payload: { label, index } }));

test('after a send whose answer was lost, the next send of as many records is not dropped as its duplicate', async () => {
  const connection = new KafkaConnection({
    brokers: brokers(),
    client: 'kafkajs',
    clientId: 'ferry-lost-answer',
    kafkaLogLevel: 'nothing',
    logger: silentLogger,
    connectionTimeoutMs: 1_000,
    requestTimeoutMs: 1_500,
    // Every broker socket goes through the proxy, whatever address the metadata gives.
    kafkaConfig: {
      socketFactory: ({ onConnect }: { onConnect: () => void }) =>
        connect(proxy.port, '127.0.0.1', onConnect),
    },
  });
  const publisher = new KafkaPublisher(connection, { defaultDestination: topic, producerRetries: 1 });
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
