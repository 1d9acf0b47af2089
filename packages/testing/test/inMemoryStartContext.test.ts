/**
 * Review 71's class on the in-memory consumer: a delivery is handled outside the async context
 * the consumer was attached in. Acceptance and the observer's events see no span of the
 * application's start-up (its loop starts in attach's context and otherwise runs in it).
 */
import { FERRY_HEADERS } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { InMemoryBroker, attachInMemoryConsumer, waitUntil, type InMemoryConsumer } from '@ferry/testing';
import {
  activeTraceId,
  inApplicationSpan,
  installTracing,
  traceRecordingAcceptor,
  type TestTracing,
} from '../../../test-support/tracing';

let tracing: TestTracing;
beforeAll(() => {
  tracing = installTracing();
});
afterAll(async () => {
  await tracing.shutdown();
});

test('deliveries are accepted and reported with no span of the attach active', async () => {
  const broker = new InMemoryBroker();
  broker.declareQueue('orders');
  const acceptor = traceRecordingAcceptor();
  const observed: { type: string; trace: string | null }[] = [];
  let consumer: InMemoryConsumer | undefined;
  const startup = inApplicationSpan('application start-up', () => {
    consumer = attachInMemoryConsumer(acceptor, {
      broker,
      queue: 'orders',
      consumer: 'billing',
      observer: (event: TransportConsumerEvent) =>
        void observed.push({ type: event.type, trace: activeTraceId() }),
    });
  });
  try {
    await consumer!.ready({ timeoutMs: 5_000 });
    broker.send('orders', {
      body: Buffer.from('{"orderId":1}'),
      headers: { [FERRY_HEADERS.messageId]: 'untraced-1' },
    });
    await waitUntil('the delivery accepted', () => observed.some((event) => event.type === 'accepted'));
  } finally {
    await consumer?.close();
  }
  const startupTrace = startup.spanContext().traceId;
  expect({
    acceptedUnder: acceptor.traces.filter((id) => id === startupTrace),
    reportedUnder: observed.filter((event) => event.trace === startupTrace),
  }).toEqual({ acceptedUnder: [], reportedUnder: [] });
  expect(acceptor.traces.length).toBeGreaterThan(0);
});
