/**
 * Review 129: the kafkajs consumer's own restart of a crashed client (kafkajs is told never to
 * restart). A disconnect() that comes after restartOnFailure answered and before kafkajs reports
 * the crash (here: queued by the answer itself) wins: the crash is reported as no restart
 * (`restartInMs` null: nothing restarts it) and nothing of the client outlives the disconnect. kafkajs only (@platformatic/kafka
 * never restarts itself).
 */
import { deleteGroups, deleteTopics, ensureTopics } from '../src';
import type { DriverConsumer, SessionHandlers } from '../src/client/types';
import { fastGroup, testConnection, uniqueName } from './support';
import { expectBackToBaseline, settledResources } from './quiet';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';

failOnUnhandledRejections();
jest.setTimeout(60_000);

// No retries of the failed batch: the crash comes at once.
const connection = testConnection({ kafkaConfig: { retry: { retries: 0 } } });
const topic = uniqueName('r129-answer');
const groupId = uniqueName('r129-answer-group');

beforeAll(async () => {
  await ensureTopics(connection, [{ topic, partitions: 1 }]);
  const producer = connection.kafka.producer();
  await producer.connect();
  await producer.send({ topic, messages: [{ value: 'crashes its batch' }] });
  await producer.disconnect();
});
afterAll(async () => {
  await deleteGroups(connection, [groupId]);
  await deleteTopics(connection, [topic]);
});

test('a disconnect() between the restart answer and the crash report: no restart reported, nothing left', async () => {
  const baseline = await settledResources();
  const crashes: (number | null)[] = [];
  let crashed!: () => void;
  const crash = new Promise<void>((resolve) => (crashed = resolve));
  let disconnecting: Promise<void> | undefined;
  const handlers: SessionHandlers = {
    eachBatch: () => Promise.reject(Object.assign(new Error('the batch failed'), { retriable: true })),
    onJoin: () => undefined,
    onCrash: (_error, restartInMs) => {
      crashes.push(restartInMs);
      crashed();
    },
  };
  const consumer: DriverConsumer = connection.driver.consumer({
    groupId,
    topics: [topic],
    fromBeginning: true,
    ...fastGroup,
    maxWaitTimeMs: 200,
    metadataMaxAgeMs: 30_000,
    partitionsConsumedConcurrently: 1,
    restartOnFailure: () => {
      // The owner closes as the answer is given (before kafkajs reports the crash).
      queueMicrotask(() => (disconnecting ??= consumer.disconnect()));
      return true;
    },
    signal: new AbortController().signal,
  });
  try {
    await consumer.run(handlers);
    await crash; // within jest's timeout
    await disconnecting;
    expect(crashes).toEqual([null]);
    await expectBackToBaseline(baseline);
  } finally {
    await (disconnecting ?? consumer.disconnect());
  }
});
