/**
 * Review 156 (failed first): a KafkaPublisher shared for months by a relay's pipelined claims,
 * several relays or an application's own publishes. Each send raced its answer against the
 * publisher's long-lived signals (its closing one, the producer's in-flight one) with a listener
 * of its own on each (race.ts raceAbort): eleven sends at once passed Node's limit of 10, a
 * MaxListenersExceededWarning ("possible EventTarget memory leak"). What should happen: those
 * signals hold at most one listener of the sends however many run at once (core's onAbort), the
 * same after N rounds and after 2N, and none once the sends ended.
 */
import { getEventListeners } from 'node:events';
import { afterAll, expect, test } from '@jest/globals';
import { KafkaPublisher, deleteTopics, ensureTopics } from '../src';
import { outboxMessage, testConnection, uniqueName } from './support';

const AT_ONCE = 30;
const ROUNDS = 10;

const connection = testConnection();
const name = uniqueName('review156');
afterAll(async () => {
  await deleteTopics(connection, [name]);
});

/** The publisher's own signals (private), which live as long as it does. */
function longLived(publisher: KafkaPublisher): AbortSignal[] {
  const own = publisher as unknown as { stopping: AbortController; inFlight: AbortController };
  return [own.stopping.signal, own.inFlight.signal];
}

test(`${AT_ONCE} publishes at once: at most one listener on the publisher's own signals, the same after N and 2N rounds`, async () => {
  await ensureTopics(connection, [{ topic: name, partitions: 1 }]);
  const publisher = new KafkaPublisher(connection, { defaultDestination: name });
  const never = new AbortController().signal;
  let most = 0;
  const { addEventListener } = EventTarget.prototype;
  EventTarget.prototype.addEventListener = function (
    this: EventTarget,
    ...args: Parameters<typeof addEventListener>
  ) {
    addEventListener.apply(this, args);
    if (this instanceof AbortSignal && longLived(publisher).includes(this))
      most = Math.max(most, getEventListeners(this, 'abort').length);
  };
  const rounds = async (count: number): Promise<void> => {
    for (let round = 0; round < count; round += 1) {
      const outcomes = await Promise.all(
        Array.from({ length: AT_ONCE }, () => publisher.publish([outboxMessage()], never)),
      );
      expect(outcomes.flat().map((outcome) => outcome.status)).toEqual(Array(AT_ONCE).fill('sent'));
    }
  };
  try {
    await publisher.connect();
    await rounds(ROUNDS);
    const afterN = most;
    await rounds(ROUNDS);
    expect(most).toBe(afterN);
    expect(most).toBeLessThanOrEqual(2);
  } finally {
    EventTarget.prototype.addEventListener = addEventListener;
    await publisher.close();
  }
});
