/**
 * Review finding (failed first), review 99. Review 98 made close() end the publishes in flight by
 * combining each call's signal with the publisher's closing one (`AbortSignal.any`). Node 20 keeps
 * a reference to every signal combined with a source in that source until the source aborts, so
 * the closing signal, which lives as long as the publisher, gathered one entry per publish call:
 * a relay publishing for weeks grew its heap by every batch it ever published. What should
 * happen: no signal a publish call combines with outlives the call (the closing signal is
 * listened to through core's onAbort, let go when the call returns); close() still ends a
 * publish in flight (review98-closeWhileConnecting).
 */
import { afterAll, afterEach, describe, expect, it, jest } from '@jest/globals';
import { SqsPublisher } from '@ferry/sqs';
import { TestQueues, neverAborted, openConnection, outboxMessages, uniqueName } from './support/sqs';

describe('review99: the signals of SqsPublisher.publish', () => {
  const connection = openConnection();
  const queues = new TestQueues(connection);
  afterEach(() => {
    jest.restoreAllMocks();
  });
  afterAll(async () => {
    await queues.cleanup();
    connection.close();
  });

  it('combine no signal that outlives the call (the publisher holds nothing of a call once it returns)', async () => {
    const { queueUrl } = await queues.declareBare({ name: uniqueName('r99-signals') });
    const publisher = new SqsPublisher(connection, { defaultDestination: queueUrl });
    const calls = 5;
    const signals: AbortSignal[] = [];
    const combine = AbortSignal.any.bind(AbortSignal);
    jest.spyOn(AbortSignal, 'any').mockImplementation((given) => {
      signals.push(...given);
      return combine(given);
    });
    for (let call = 0; call < calls; call += 1) {
      const [outcome] = await publisher.publish(outboxMessages(1, null), neverAborted());
      expect(outcome?.status).toBe('sent');
    }
    // A signal combined in every call is one the publisher keeps: Node holds each call's
    // combination in it for as long as it lives.
    const combinedEveryCall = [...new Set(signals)].filter(
      (signal) => signals.filter((one) => one === signal).length >= calls,
    );
    expect(combinedEveryCall).toHaveLength(0);
    await publisher.close();
  });
});
