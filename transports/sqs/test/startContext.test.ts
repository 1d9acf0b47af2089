/**
 * Review 71's class on SQS: a message is handled outside the async context the consumer was
 * attached in. Acceptance (where the application's database instrumentation makes its spans) and
 * the observer's events see no span of the application's start-up: the polling loop starts in
 * attach's context and every batch otherwise runs in it. Real ElasticMQ.
 */
import { describe, expect, it } from '@jest/globals';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachSqsConsumer, type SqsConsumer } from '@ferry/sqs';
import {
  activeTraceId,
  inApplicationSpan,
  installTracing,
  traceRecordingAcceptor,
  type TestTracing,
} from '../../../test-support/tracing';
import { sendRaw, uniqueName, waitFor } from './support/sqs';
import { useSqsQueuesFixture } from './support/queuesFixture';

jest.setTimeout(60_000);

describe('SQS messages and the context the consumer was started in', () => {
  const fixture = useSqsQueuesFixture();
  let tracing: TestTracing;
  beforeAll(() => {
    tracing = installTracing();
  });
  afterAll(async () => {
    await tracing.shutdown();
  });

  it('are accepted and reported with no span of the attach active', async () => {
    const { queueUrl } = await fixture.queues.declare({ name: uniqueName('startctx') });
    const acceptor = traceRecordingAcceptor();
    const observed: { type: string; trace: string | null }[] = [];
    let consumer: SqsConsumer | undefined;
    const startup = inApplicationSpan('application start-up', () => {
      consumer = attachSqsConsumer(acceptor, {
        connection: fixture.connection,
        queueUrl,
        consumer: 'billing',
        waitTimeSeconds: 1,
        observer: (event: TransportConsumerEvent) =>
          void observed.push({ type: event.type, trace: activeTraceId() }),
      });
    });
    fixture.consumers.push(consumer!);
    await consumer!.ready({ timeoutMs: 20_000 });

    await sendRaw(fixture.connection, queueUrl, '{"orderId":1}');
    await waitFor('the message accepted', () =>
      observed.some((event) => event.type === 'accepted') ? true : undefined,
    );

    const startupTrace = startup.spanContext().traceId;
    expect({
      acceptedUnder: acceptor.traces.filter((id) => id === startupTrace),
      reportedUnder: observed.filter((event) => event.trace === startupTrace),
    }).toEqual({ acceptedUnder: [], reportedUnder: [] });
    expect(acceptor.traces.length).toBeGreaterThan(0);
  });
});
