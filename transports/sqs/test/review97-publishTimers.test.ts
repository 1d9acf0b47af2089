/**
 * Review finding (failed first), review 97. SqsPublisher.publish() armed its call's deadlines
 * (answerWithinMs, and confirmTimeoutMs for the requests) and returned with them still armed:
 * unref'd, they did not keep the process up, but every publish left two timers (and their
 * combined signals and listeners) alive for up to 2 x confirmTimeoutMs after it answered, so a
 * relay publishing a batch every few milliseconds held thousands.
 * What should happen: a publish that returned leaves none of ferry's timers armed (core's
 * clearableDeadline, cleared when the call ends).
 */
import { createHook } from 'node:async_hooks';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { SqsPublisher, type SqsConnection } from '@ferry/sqs';
import { TestQueues, neverAborted, openConnection, outboxMessages, uniqueName } from './support/sqs';

let connection: SqsConnection;
let queues: TestQueues;

beforeAll(async () => {
  connection = openConnection();
  await connection.connect();
  queues = new TestQueues(connection);
});

afterAll(async () => {
  await queues.cleanup();
  await connection.close();
});

/** Timers ferry's own code (core or this transport) armed and that neither fired nor were cleared. */
function ferryTimers(): { armed: () => number; stop: () => void } {
  const armed = new Set<number>();
  const hook = createHook({
    init(id, type) {
      if (type !== 'Timeout') return;
      const stack = new Error().stack ?? '';
      if (/(packages[\\/]core|transports[\\/]sqs)[\\/](src|dist)[\\/]/.test(stack)) armed.add(id);
    },
    destroy(id) {
      armed.delete(id);
    },
  });
  hook.enable();
  return { armed: () => armed.size, stop: () => hook.disable() };
}

it('leaves none of its timers armed once publish() returned', async () => {
  const { queueUrl } = await queues.declare({ name: uniqueName('timers') });
  const publisher = new SqsPublisher(connection, { confirmTimeoutMs: 60_000 });
  await publisher.publish(outboxMessages(2, queueUrl), neverAborted());
  const timers = ferryTimers();
  try {
    for (let n = 0; n < 3; n += 1) {
      const outcomes = await publisher.publish(outboxMessages(12, queueUrl), neverAborted());
      expect(outcomes.every((o) => o.status === 'sent')).toBe(true);
    }
    // A cleared timer is destroyed on a later turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    expect(timers.armed()).toBe(0);
  } finally {
    timers.stop();
  }
});
