/**
 * Review 71's class on RabbitMQ: a delivery is handled outside the async context the consumer was
 * attached in, and outside the one its connection was opened in (a publisher sharing it,
 * connected inside a traced request). Acceptance (where the application's database
 * instrumentation makes its spans) and the observer's events see no span of the application's
 * start-up: amqplib calls the consume callback from the socket's events, which otherwise run in
 * the context the socket was opened in.
 */
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachRabbitConsumer, RabbitConnection, type RabbitConsumer } from '@ferry/rabbitmq';
import pino from 'pino';
import {
  activeTraceId,
  inApplicationSpan,
  installTracing,
  traceRecordingAcceptor,
  type TestTracing,
} from '../../../test-support/tracing';
import { AMQP_URL, InboxQueue, uniqueName, waitFor } from './support/broker';

jest.setTimeout(60_000);

const silent = pino({ level: 'silent' });

describe('RabbitMQ deliveries and the context the consumer was started in', () => {
  const setup = new InboxQueue('startctx');
  let tracing: TestTracing;
  let connection: RabbitConnection | undefined;
  let consumer: RabbitConsumer | undefined;
  beforeAll(() => {
    tracing = installTracing();
  });
  afterAll(async () => {
    await consumer?.close();
    await connection?.close();
    await tracing.shutdown();
  });

  it('are accepted and reported with no span of the connect or the attach active', async () => {
    const acceptor = traceRecordingAcceptor();
    const observed: { type: string; trace: string | null }[] = [];
    connection = new RabbitConnection({
      url: AMQP_URL,
      connectionName: uniqueName('startctx'),
      logger: silent,
    });
    // A publisher sharing the connection opened it inside a traced request.
    const request = inApplicationSpan('request that published', () => void connection!.connect());
    await connection.connect();
    const startup = inApplicationSpan('application start-up', () => {
      consumer = attachRabbitConsumer(acceptor, {
        connection: connection!,
        queue: setup.queue,
        consumer: 'billing',
        logger: silent,
        observer: (event: TransportConsumerEvent) =>
          void observed.push({ type: event.type, trace: activeTraceId() }),
      });
    });
    await consumer!.ready({ timeoutMs: 20_000 });

    setup.broker.channel.sendToQueue(setup.queue, Buffer.from('{"orderId":1}'), {
      messageId: 'untraced-1',
      contentType: 'application/json',
    });
    await waitFor('the delivery accepted', () =>
      observed.some((event) => event.type === 'accepted') ? true : undefined,
    );

    const startupTraces = new Set([request.spanContext().traceId, startup.spanContext().traceId]);
    expect({
      acceptedUnder: acceptor.traces.filter((id) => id !== null && startupTraces.has(id)),
      reportedUnder: observed.filter((event) => event.trace !== null && startupTraces.has(event.trace)),
    }).toEqual({ acceptedUnder: [], reportedUnder: [] });
    expect(acceptor.traces.length).toBeGreaterThan(0);
  });
});
