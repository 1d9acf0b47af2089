/**
 * Review 71's class on Kafka: a record is handled outside the async context the consumer was
 * attached in. Acceptance (where the application's database instrumentation makes its spans) and
 * the observer's events see no span of the application's start-up: the client's fetch loop starts
 * in attach's context and every batch otherwise runs in it. Runs on both clients
 * (platformatic/startContext.test.ts).
 */
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachKafkaConsumer, type KafkaInboxConsumer } from '../src';
import {
  activeTraceId,
  inApplicationSpan,
  installTracing,
  traceRecordingAcceptor,
  type TestTracing,
} from '../../../test-support/tracing';
import { fastGroup, InboxTopic, outboxMessage, waitFor } from './support';

jest.setTimeout(120_000);

describe('Kafka records and the context the consumer was started in', () => {
  const setup = new InboxTopic('startctx', 1);
  let tracing: TestTracing;
  let consumer: KafkaInboxConsumer | undefined;
  beforeAll(() => {
    tracing = installTracing();
  });
  afterAll(async () => {
    await consumer?.close();
    await tracing.shutdown();
  });

  it('are accepted and reported with no span of the attach active', async () => {
    const acceptor = traceRecordingAcceptor();
    const observed: { type: string; trace: string | null }[] = [];
    const startup = inApplicationSpan('application start-up', () => {
      consumer = attachKafkaConsumer(acceptor, {
        connection: setup.connection,
        topic: setup.topic,
        groupId: setup.groupId,
        consumer: 'billing',
        ...fastGroup,
        maxWaitTimeMs: 200,
        observer: (event: TransportConsumerEvent) =>
          void observed.push({ type: event.type, trace: activeTraceId() }),
      });
    });
    await consumer!.ready({ timeoutMs: 60_000 });

    const message = outboxMessage({ destination: setup.topic });
    const [outcome] = await setup.publisher.publish([message], new AbortController().signal);
    expect(outcome?.status).toBe('sent');
    await waitFor(
      () => acceptor.accepted.some((input) => input.messageId === message.id),
      () => JSON.stringify(observed),
    );

    const startupTrace = startup.spanContext().traceId;
    expect({
      acceptedUnder: acceptor.traces.filter((id) => id === startupTrace),
      reportedUnder: observed.filter((event) => event.trace === startupTrace),
    }).toEqual({ acceptedUnder: [], reportedUnder: [] });
  });
});
