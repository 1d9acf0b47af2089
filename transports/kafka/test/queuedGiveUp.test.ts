/**
 * A publish given up while its send still waits in the producer's queue (SequencedSends: one
 * send at a time) is never handed to the client: the relay records it not sent and publishes it
 * again, so a send that left the queue later would write it twice, and after its retry's
 * neighbours. A send already handed to the client is out of ferry's hands and goes on.
 */
import { KafkaPublisher, deleteTopics, ensureTopics } from '../src';
import { SequencedSends } from '../src/client/sequencedSends';
import { endOffsets, outboxMessage, testConnection, uniqueName, waitFor, watchSends } from './support';

const connection = testConnection();
const topics: string[] = [];
const never = new AbortController().signal;

afterAll(async () => {
  await deleteTopics(connection, topics);
});

async function topic(): Promise<string> {
  const name = uniqueName('queued');
  topics.push(name);
  await ensureTopics(connection, [{ topic: name, partitions: 1 }]);
  return name;
}

/**
 * A publisher whose first send is held in the client, and a second publish (`queued`, on
 * `signal`) waiting behind it in the producer's queue. `release` lets the first one go.
 */
async function queuedBehindHeld(confirmTimeoutMs: number, signal: AbortSignal) {
  const name = await topic();
  const { connection: local, sent, hold } = watchSends();
  const held = hold();
  const publisher = new KafkaPublisher(local, { defaultDestination: name, confirmTimeoutMs });
  await publisher.connect();
  const queuedSends = jest.spyOn(SequencedSends.prototype, 'send');
  const first = publisher.publish([outboxMessage({ payload: { n: 0 } })], never);
  await held.handed;
  const message = outboxMessage({ payload: { n: 1 } });
  const queued = publisher.publish([message], signal);
  await waitFor(
    () => queuedSends.mock.calls.length === 2,
    () => `${queuedSends.mock.calls.length} send(s) reached the producer's queue, not 2`,
  );
  return { name, publisher, sent, first, message, queued, release: () => held.release() };
}

afterEach(() => {
  jest.restoreAllMocks();
});

describe('KafkaPublisher: a send given up while still queued behind another', () => {
  // Past confirmTimeoutMs a send the producer never took is `unavailable`: nothing of it was tried.
  test.each([
    ['its publish is aborted', 'abort', 'retryable'],
    ['its confirmTimeoutMs passes', 'timeout', 'unavailable'],
  ] as const)('is never handed to the client when %s: only its retry is written', async (_, way, status) => {
    const abort = new AbortController();
    const confirmTimeoutMs = way === 'timeout' ? 2_000 : 60_000;
    const { name, publisher, sent, first, message, queued, release } = await queuedBehindHeld(
      confirmTimeoutMs,
      abort.signal,
    );
    try {
      if (way === 'abort') abort.abort(new Error('lease lost'));
      const [given] = await queued;
      expect(given).toMatchObject({ id: message.id, status });
      release();
      // The first send was handed to the client before the give-up: it goes on (written).
      await first;
      // The relay publishes the message again: that is its one copy in the topic.
      expect(await publisher.publish([message], never)).toEqual([{ id: message.id, status: 'sent' }]);
    } finally {
      release();
      await publisher.close();
    }
    expect(sent).toEqual([[name], [name]]);
    expect((await endOffsets(connection, name)).get(0)).toBe('2');
  });

  test('is never handed to the client when the publisher is closed', async () => {
    const { name, publisher, sent, message, queued, release } = await queuedBehindHeld(60_000, never);
    const closing = publisher.close();
    try {
      const [given] = await queued;
      // Ended by close(), not by the relay: the cluster out of reach, no attempt spent.
      expect(given).toMatchObject({ id: message.id, status: 'unavailable' });
    } finally {
      release();
      await closing;
    }
    expect(sent).toEqual([[name]]);
    expect((await endOffsets(connection, name)).get(0)).toBe('1');
  });
});
