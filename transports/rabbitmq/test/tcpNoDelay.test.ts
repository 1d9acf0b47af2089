/**
 * ferry's AMQP sockets have Nagle's algorithm off. With it on (amqplib's default), a frame written
 * while an earlier one is unacknowledged waits for the broker's delayed ACK, up to 40 ms: every
 * consumer close() stalled that long after its last ack (cancel behind the ack frame), and the bench's
 * acceptance run of 2,000 messages spent a fifth of its time there.
 */
import { RabbitConnection, RabbitPublisher } from '@ferry/rabbitmq';
import { recordSockets, type SocketRecorder } from '../../../test-support/tcpNoDelay';
import { AMQP_URL, uniqueName } from './support/broker';

const port = Number(new URL(AMQP_URL).port || 5672);

describe('TCP_NODELAY on broker sockets', () => {
  let sockets: SocketRecorder;
  beforeEach(() => {
    sockets = recordSockets();
  });
  afterEach(() => sockets.stop());

  it('a shared RabbitConnection connects with Nagle off', async () => {
    const connection = new RabbitConnection({ url: AMQP_URL, connectionName: uniqueName('nodelay') });
    try {
      await connection.connect();
      const opened = sockets.to(port);
      expect(opened).toHaveLength(1);
      expect(opened.map((s) => s.noDelay)).toEqual([true]);
    } finally {
      await connection.close();
    }
  });

  it('a publisher given a URL connects with Nagle off', async () => {
    const publisher = new RabbitPublisher(AMQP_URL);
    try {
      await publisher.connect();
      const opened = sockets.to(port);
      expect(opened.length).toBeGreaterThan(0);
      expect(opened.every((s) => s.noDelay)).toBe(true);
    } finally {
      await publisher.close();
    }
  });
});
