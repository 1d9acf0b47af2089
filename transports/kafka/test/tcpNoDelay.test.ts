/**
 * ferry's broker sockets have Nagle's algorithm off on both clients (@platformatic/kafka sets it
 * itself; kafkajs's sockets are opened by ferry's gate). With it on, a request written while an
 * earlier one is unacknowledged waits for the broker's delayed ACK, up to 40 ms: a consumer's
 * offset commit or heartbeat written behind a long-poll fetch on the same broker connection.
 */
import type { InboxAcceptor } from '@ferry/core';
import { attachKafkaConsumer, deleteTopics, ensureTopics, KafkaPublisher } from '../src';
import { recordSockets, type SocketRecorder } from '../../../test-support/tcpNoDelay';
import { brokers, outboxMessage, testConnection, uniqueName } from './support';

const ports = new Set(brokers().map((broker) => Number(broker.split(':').pop())));
const acceptor: InboxAcceptor = {
  maxPayloadBytes: 1024,
  acceptMany: async (inputs) => inputs.map(() => ({ kind: 'accepted' as const, id: 'x' })),
};

describe('TCP_NODELAY on broker sockets', () => {
  let sockets: SocketRecorder;
  const opened = () => [...ports].flatMap((port) => sockets.to(port));
  beforeEach(() => {
    sockets = recordSockets();
  });
  afterEach(() => sockets.stop());

  it('a publisher and a consumer connect with Nagle off', async () => {
    const connection = testConnection();
    const topic = uniqueName('nodelay');
    await ensureTopics(connection, [{ topic, partitions: 1 }]);
    const publisher = new KafkaPublisher(connection);
    const consumer = attachKafkaConsumer(acceptor, {
      connection,
      topic,
      groupId: uniqueName('nodelay-group'),
      consumer: 'orders',
    });
    try {
      const message = outboxMessage({ destination: topic });
      expect(await publisher.publish([message], new AbortController().signal)).toEqual([
        { id: message.id, status: 'sent' },
      ]);
      await consumer.ready();
      expect(opened().length).toBeGreaterThan(1);
      expect(opened().filter((s) => !s.noDelay)).toEqual([]);
    } finally {
      await consumer.close();
      await publisher.close();
      await deleteTopics(connection, [topic]).catch(() => undefined);
    }
  });
});
