/**
 * Review 147 (kafkajs): close() while a chunk holding a poison record is in flight, its good
 * records being accepted and the poison one still to be dead-lettered, the dead-letter producer's
 * connections gone since it connected (the broker closes a connection idle for
 * connections.max.idle.ms, 10 minutes by default: dead letters are rare). The chunk finishes as
 * README "close()" says: the poison record is dead-lettered and the chunk's offset committed;
 * never its offset committed without its dead letter (a lost record). Failed on main (review
 * 145's producer gate): the closing consumer's dead-letter producer was refused every new
 * connection, so the dead letter could not be written and the chunk was left to the next owner
 * (which dead-letters it: nothing lost, the chunk's accepted records read again).
 */
import net from 'node:net';
import { FERRY_HEADERS } from '@ferry/core';
import type { ISocketFactory } from 'kafkajs';
import type { KafkaInboxConsumer } from '../src';
import { ConsumerHarness } from './consumerHarness';
import { committedOffsets, endOffsets, readBack, testConnection, waitFor } from './support';

jest.setTimeout(60_000);
let harness: ConsumerHarness;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
});

afterAll(async () => {
  await harness.close();
});

test('a poison record of the chunk in flight at close() is dead-lettered and its offset committed, never committed alone', async () => {
  const topic = await harness.topicPair('r147-dlq-close');
  await harness.raw.send({
    topic,
    messages: [
      { value: '{"n":0}', headers: { [FERRY_HEADERS.messageId]: 'good-0' } },
      { value: 'not json', headers: { [FERRY_HEADERS.messageId]: 'poison-1' } },
      { value: '{"n":2}', headers: { [FERRY_HEADERS.messageId]: 'good-2' } },
    ],
  });
  // Every socket of the consumer's clients, in order: its dead-letter producer connects first.
  const sockets: net.Socket[] = [];
  const socketFactory: ISocketFactory = ({ host, port, onConnect }) => {
    const socket = net.connect({ host, port }, onConnect);
    sockets.push(socket);
    return socket;
  };
  let consumer: KafkaInboxConsumer | null = null;
  let producerSockets: net.Socket[] = [];
  let closing: Promise<void> | null = null;
  harness.acceptor.afterCommit = async () => {
    if (closing !== null) return;
    // The chunk may come before ready() resolved: close() needs the handle.
    await waitFor(
      () => consumer !== null,
      () => 'the consumer never joined',
    );
    // The producer's connections reset (the broker closed them idle); then the owner closes.
    const open = producerSockets.filter((socket) => !socket.destroyed);
    const closed = open.map((socket) => new Promise((resolve) => socket.once('close', resolve)));
    for (const socket of open)
      socket.destroy(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    await Promise.all(closed);
    closing = consumer!.close();
  };
  const started = await harness.start(topic, 'r147-dlq-close', {
    connection: testConnection({ kafkaConfig: { socketFactory } }),
    // Not the poison record first alone: the chunk's acceptance runs before its dead letter.
    maxBatchSize: 10,
  });
  producerSockets = sockets.slice(0, 2);
  consumer = started.handle;
  await waitFor(
    () => closing !== null,
    () => 'close() was never called',
  );
  await closing;
  harness.acceptor.afterCommit = null;

  const committed = (await committedOffsets(harness.connection, started.groupId, topic)).get(0);
  const deadLettered = Number((await endOffsets(harness.connection, `${topic}.dlq`)).get(0) ?? '0');
  // Never the offset past the poison record without its dead letter.
  expect({ committedPastPoison: committed === '3', deadLettered }).not.toEqual({
    committedPastPoison: true,
    deadLettered: 0,
  });
  // What close() left is the next owner's: it reads the chunk again and dead-letters the record once.
  const next = await harness.start(topic, 'r147-dlq-close', { groupId: started.groupId });
  await harness.waitFullyCommitted(started.groupId, topic);
  await next.handle.close();
  const copies = await readBack(harness.connection, `${topic}.dlq`, 1);
  expect(copies.map((copy) => copy.headers['x-ferry-source-offset'])).toEqual(['1']);
  // The chunk in flight finished at close(): dead letter written, offset committed, nothing left over.
  expect({ committed, deadLettered }).toEqual({ committed: '3', deadLettered: 1 });
});
