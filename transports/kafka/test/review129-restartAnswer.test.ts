/**
 * Review 129: the kafkajs consumer's own restart of a crashed client (kafkajs is told never to
 * restart it, ferry's KafkajsConsumer does). Whatever restartOnFailure answers, and whenever the
 * owner disconnects, the crash is reported as it is dealt with: a disconnect() that comes after
 * the answer and before kafkajs reports the crash wins (no restart), and an answer that throws is
 * no restart either (kafkajs, told so, restarted the client itself behind ferry's back). kafkajs
 * only: @platformatic/kafka never restarts itself.
 */
import { deleteGroups, deleteTopics, ensureTopics } from '../src';
import type { DriverConsumer, SessionHandlers } from '../src/client/types';
import { fastGroup, testConnection, uniqueName } from './support';
import { expectBackToBaseline, recordingLogger, settledResources } from './quiet';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';

failOnUnhandledRejections();
jest.setTimeout(60_000);

const log = recordingLogger();
// No retries of the failed batch: the crash comes at once.
const connection = testConnection({
  kafkaConfig: { retry: { retries: 0 } },
  logger: log.logger,
  kafkaLogLevel: 'error',
});
const topic = uniqueName('r129-answer');
const groups: string[] = [];

beforeAll(async () => {
  await ensureTopics(connection, [{ topic, partitions: 1 }]);
  const producer = connection.kafka.producer();
  await producer.connect();
  await producer.send({ topic, messages: [{ value: 'crashes its batch' }] });
  await producer.disconnect();
});
afterAll(async () => {
  await deleteGroups(connection, groups);
  await deleteTopics(connection, [topic]);
});

/** A consumer of a new group whose batch fails retriably, and the restartInMs of its crashes. */
function crashingConsumer(restartOnFailure: (consumer: DriverConsumer) => boolean): {
  consumer: DriverConsumer;
  crashes: (number | null)[];
  crashed: Promise<void>;
  handlers: SessionHandlers;
} {
  const crashes: (number | null)[] = [];
  let reported!: () => void;
  const crashed = new Promise<void>((resolve) => (reported = resolve));
  const groupId = uniqueName('r129-answer-group');
  groups.push(groupId);
  const consumer: DriverConsumer = connection.driver.consumer({
    groupId,
    topics: [topic],
    fromBeginning: true,
    ...fastGroup,
    maxWaitTimeMs: 200,
    metadataMaxAgeMs: 30_000,
    partitionsConsumedConcurrently: 1,
    restartOnFailure: () => restartOnFailure(consumer),
    signal: new AbortController().signal,
  });
  const handlers: SessionHandlers = {
    eachBatch: () => Promise.reject(Object.assign(new Error('the batch failed'), { retriable: true })),
    onJoin: () => undefined,
    onCrash: (_error, restartInMs) => {
      crashes.push(restartInMs);
      reported();
    },
  };
  return { consumer, crashes, crashed, handlers };
}

test('a disconnect() between the restart answer and the crash report: no restart reported, nothing left', async () => {
  const baseline = await settledResources();
  let disconnecting: Promise<void> | undefined;
  const { consumer, crashes, crashed, handlers } = crashingConsumer((self) => {
    // The owner closes as the answer is given (before kafkajs reports the crash).
    queueMicrotask(() => (disconnecting ??= self.disconnect()));
    return true;
  });
  try {
    await consumer.run(handlers);
    await crashed; // within jest's timeout
    await disconnecting;
    expect(crashes).toEqual([null]);
    await expectBackToBaseline(baseline);
  } finally {
    await (disconnecting ?? consumer.disconnect());
  }
});

test('a restart answer that throws: no restart, by ferry nor by kafkajs', async () => {
  const { consumer, crashes, crashed, handlers } = crashingConsumer(() => {
    throw new Error('the answer failed');
  });
  try {
    await consumer.run(handlers);
    await crashed; // within jest's timeout
    expect(crashes).toEqual([null]);
    // kafkajs logs its own restart as it schedules it, right after the crash report.
    expect(log.lines.map((line) => line.msg).filter((msg) => /restart/i.test(msg))).toEqual([]);
  } finally {
    await consumer.disconnect();
  }
});
