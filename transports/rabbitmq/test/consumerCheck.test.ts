/**
 * consumer.check(), the readiness probe of a RabbitMQ consumer (review 71): down until the
 * consumer first attached, up while it consumes, down while it has lost its broker (the
 * connection cut, every reconnect refused), up again once it re-attached, FERRY_CLOSED once
 * closed. ready() stays the start-up gate: it resolved once and stays resolved. The broker is
 * reached through the fault harness's TCP proxy, so only this consumer's connection is cut.
 */
import { ConsumerDisconnectedError } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachRabbitConsumer, RabbitConnection } from '@ferry/rabbitmq';
import pino from 'pino';
import { TcpProxy } from '../../../fault-tests/harness/tcpProxy';
import { traceRecordingAcceptor } from '../../../test-support/tracing';
import { AMQP_URL, InboxQueue, uniqueName, waitFor } from './support/broker';

jest.setTimeout(60_000);

const silent = pino({ level: 'silent' });

/** What check() answers now: 'up', or the rejection. */
const probe = (check: () => Promise<void>): Promise<unknown> =>
  check().then(
    () => 'up',
    (error: unknown) => error,
  );

describe('a RabbitMQ consumer’s check()', () => {
  const setup = new InboxQueue('check');
  let proxy: TcpProxy | undefined;
  let connection: RabbitConnection | undefined;

  afterAll(async () => {
    await setup.attached?.close();
    setup.attached = null;
    await connection?.close();
    await proxy?.close();
  });

  it('is down until attached, up while consuming, down while the broker is lost, up again once re-attached', async () => {
    const target = new URL(AMQP_URL);
    proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 5672) });
    await proxy.setMode('refuse');
    connection = new RabbitConnection({
      url: proxy.urlFor(AMQP_URL),
      connectionName: uniqueName('check'),
      reconnectBackoff: { initialMs: 50, maxMs: 200 },
      logger: silent,
    });
    const events: TransportConsumerEvent[] = [];
    const acceptor = traceRecordingAcceptor();
    const consumer = attachRabbitConsumer(acceptor, {
      connection,
      queue: setup.queue,
      consumer: 'billing',
      logger: silent,
      observer: (event) => void events.push(event),
    });
    setup.attached = consumer;
    const what = `RabbitMQ consumer billing of queue ${setup.queue}`;

    // Never attached: the broker refuses every connect.
    await waitFor('a refused connect', () =>
      events.some((e) => e.type === 'disconnected') ? true : undefined,
    );
    const before = await probe(() => consumer.check());
    expect(before).toBeInstanceOf(ConsumerDisconnectedError);
    expect(before).toMatchObject({ code: 'FERRY_TRANSPORT_ERROR', consumer: what });
    expect((before as Error).message).toMatch(
      new RegExp(
        `^${what} is not connected: it has not attached yet; the last attempt failed: .*ECONNREFUSED`,
      ),
    );

    await proxy.setMode('pass');
    await consumer.ready({ timeoutMs: 20_000 });
    expect(await probe(() => consumer.check())).toBe('up');

    // The broker goes away: the connection is cut and every reconnect refused.
    const connectedBefore = events.filter((e) => e.type === 'connected').length;
    const lossesBefore = events.filter((e) => e.type === 'disconnected').length;
    // The listener stops at once; its close waits for the open connections, cut here.
    const refusing = proxy.setMode('refuse');
    proxy.resetAll();
    await refusing;
    await waitFor('the loss reported', () =>
      events.filter((e) => e.type === 'disconnected').length > lossesBefore ? true : undefined,
    );
    const during = await probe(() => consumer.check());
    expect(during).toBeInstanceOf(ConsumerDisconnectedError);
    expect((during as Error).message).toMatch(
      new RegExp(
        `^${what} is not connected: it lost its connection and has not re-attached; the last failure: `,
      ),
    );
    // ready() is the start-up gate: it stays resolved.
    await expect(consumer.ready({ timeoutMs: 1 })).resolves.toBeUndefined();

    // The broker is back: the consumer re-attaches, check() is up again, deliveries flow.
    await proxy.setMode('pass');
    await waitFor('check() up again', async () =>
      (await probe(() => consumer.check())) === 'up' ? true : undefined,
    );
    expect(events.filter((e) => e.type === 'connected').length).toBeGreaterThan(connectedBefore);
    setup.broker.channel.sendToQueue(setup.queue, Buffer.from('{"n":1}'), {
      messageId: 'after-outage',
      contentType: 'application/json',
    });
    await waitFor('the delivery after the outage accepted', () =>
      acceptor.accepted.some((input) => input.messageId === 'after-outage') ? true : undefined,
    );

    await consumer.close();
    await expect(consumer.check()).rejects.toMatchObject({
      code: 'FERRY_CLOSED',
      message: `${what} is closed`,
    });
  });
});
