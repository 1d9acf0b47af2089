/**
 * A connect attempt has a deadline: a peer that accepts the TCP connection and never answers the
 * AMQP handshake (a node still booting, a proxy into a dropped network) fails the attempt after
 * `connectTimeoutMs`, and the connection loop tries again instead of waiting for ever.
 */
import { expect, it } from '@jest/globals';
import { RabbitConnection, RabbitPublisher } from '../src';
import pino from 'pino';
import { useSilentPeer } from '../../../test-support/silentPeer';

// Accepts every connection and never writes a byte.
const peer = useSilentPeer();

it('gives up a handshake the peer never answers after connectTimeoutMs and tries again', async () => {
  const connection = new RabbitConnection({
    url: `amqp://guest:guest@127.0.0.1:${peer.port}`,
    connectTimeoutMs: 300,
    reconnectBackoff: { initialMs: 10, maxMs: 20 },
    logger: pino({ level: 'silent' }),
  });
  const failures: unknown[] = [];
  connection.onConnectRetry((error) => failures.push(error));
  void connection.connect().catch(() => undefined);
  try {
    const deadline = Date.now() + 10_000;
    while (failures.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(failures.length).toBeGreaterThanOrEqual(2);
    expect(String(failures[0])).toMatch(/ETIMEDOUT/);
  } finally {
    await connection.close();
  }
});

it('rejects a connectTimeoutMs that is not a positive integer', () => {
  for (const connectTimeoutMs of [0, -1, 1.5, Number.NaN])
    expect(() => new RabbitConnection({ url: 'amqp://localhost', connectTimeoutMs })).toThrow(
      /connectTimeoutMs/,
    );
});

// Every wait has a deadline: connect() retries until the broker answers, and its caller can bound it.
it('connect(signal) rejects when the signal aborts, while the connection goes on trying', async () => {
  const connection = new RabbitConnection({
    url: `amqp://guest:guest@127.0.0.1:${peer.port}`,
    connectTimeoutMs: 200,
    reconnectBackoff: { initialMs: 10, maxMs: 20 },
    logger: pino({ level: 'silent' }),
  });
  const publisher = new RabbitPublisher(connection);
  const failures: unknown[] = [];
  connection.onConnectRetry((error) => failures.push(error));
  try {
    const bounded = new AbortController();
    const waiting = connection.connect(bounded.signal);
    const publisherWaiting = publisher.connect(bounded.signal);
    setTimeout(() => bounded.abort(new Error('startup deadline')), 700).unref();
    await expect(waiting).rejects.toMatchObject({ code: 'FERRY_TRANSPORT_ERROR' });
    await expect(publisherWaiting).rejects.toMatchObject({ code: 'FERRY_TRANSPORT_ERROR' });
    const seen = failures.length;
    const deadline = Date.now() + 10_000;
    while (failures.length <= seen && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(failures.length).toBeGreaterThan(seen);
  } finally {
    await publisher.close();
    await connection.close();
  }
});
