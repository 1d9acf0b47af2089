/**
 * close() while a connect attempt is under way ends the attempt at once: its socket is destroyed
 * and close() resolves. Before review 97 close() waited for the attempt to end on its own, i.e.
 * for the whole connectTimeoutMs (10 s by default) when the peer accepts the TCP connection and
 * never answers the AMQP handshake (a node still booting, a proxy into a dropped network): every
 * owner of the connection (a consumer, a publisher) held the application's shutdown that long,
 * and the socket kept the process running meanwhile. The Kafka transport ends its connects at
 * close() the same way (review96-abortedConnect.test.ts).
 */
import { expect, it } from '@jest/globals';
import pino from 'pino';
import { RabbitConnection, RabbitPublisher, attachRabbitConsumer } from '../src';
import { failOnUnhandledRejections, readyOutcome } from '../../../test-support/lifecycle';
import { outcomeWithin } from '../../../test-support/deadlines';
import { openSocketsTo } from '../../../test-support/openSockets';
import { waitFor } from './support/broker';
import { useSilentPeer } from '../../../test-support/silentPeer';

failOnUnhandledRejections();

const peer = useSilentPeer();
const accepted = peer.sockets;

/** Far beyond any wait of this test: an attempt left to end on its own outlasts the test. */
const CONNECT_TIMEOUT_MS = 600_000;
/** How long close() is given (a deadline for the wait, far below CONNECT_TIMEOUT_MS). */
const CLOSE_WITHIN_MS = 10_000;
const silent = pino({ level: 'silent' });

const owners = {
  connection: () => {
    const connection = new RabbitConnection(options('amqp'));
    void connection.connect().catch(() => undefined);
    return { close: () => connection.close(), ready: null };
  },
  'connection over TLS (amqps)': () => {
    const connection = new RabbitConnection(options('amqps'));
    void connection.connect().catch(() => undefined);
    return { close: () => connection.close(), ready: null };
  },
  'consumer owning its connection': () => {
    const acceptor = {
      maxPayloadBytes: 1_000_000,
      acceptMany: () => Promise.reject(new Error('nothing is delivered')),
    };
    const consumer = attachRabbitConsumer(acceptor, {
      connection: options('amqp'),
      queue: 'review97',
      consumer: 'review97',
    });
    return { close: () => consumer.close(), ready: consumer.ready() };
  },
  'publisher owning its connection': () => {
    const publisher = new RabbitPublisher(options('amqp'));
    const connecting = publisher.connect();
    return { close: () => publisher.close(), ready: connecting };
  },
};

function options(scheme: 'amqp' | 'amqps') {
  return {
    url: `${scheme}://guest:guest@127.0.0.1:${peer.port}`,
    connectTimeoutMs: CONNECT_TIMEOUT_MS,
    logger: silent,
  };
}

it.each(Object.keys(owners) as (keyof typeof owners)[])(
  '%s: close() during a handshake the peer never answers resolves at once and leaves no socket',
  async (name) => {
    const before = openSocketsTo(peer.port);
    const owner = owners[name]();
    const ready = owner.ready === null ? null : readyOutcome(owner.ready);
    await waitFor('the connect attempt to reach the peer', async () =>
      accepted.size > 0 && openSocketsTo(peer.port) > before ? true : undefined,
    );
    const closed = await outcomeWithin(Promise.all([owner.close(), owner.close()]), CLOSE_WITHIN_MS);
    expect(closed).toEqual({ value: [undefined, undefined] });
    // The attempt's socket is gone: nothing keeps the process running, the peer sees it closed.
    expect(openSocketsTo(peer.port)).toBe(before);
    await waitFor('the peer to see the socket closed', async () => (accepted.size === 0 ? true : undefined));
    // A caller waiting for the connection is told it is closed (typed), not left waiting.
    if (ready !== null) expect(['FERRY_CLOSED', 'FERRY_TRANSPORT_ERROR']).toContain(await ready);
  },
  60_000,
);
