/**
 * Review 67, the SQS path: after a FERRY_TIMEOUT acceptHolding offers half the held batch; when
 * that half fails with a retriable non-outage error (FERRY_DATABASE_ERROR, acceptIsolated's safety
 * net), only its messages get the visibility backoff of their receive count (`acceptance-failed`,
 * the SQS consumer's transport retry). The rest, never offered since the shrink, did not fail: it
 * is made visible again at once, as a released message is, and accepted on the next receive.
 * Charging every pending message instead backs the never-offered one off with its neighbour's
 * error (`acceptance-failed` counting 2).
 */
import { describe, expect, it } from '@jest/globals';
import { FerryError, type InboxAcceptInput, type InboxAcceptResult, type InboxAcceptor } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { SqsPublisher, attachSqsConsumer } from '@ferry/sqs';
import type { PgTestAcceptor } from '../../../test-support/pgAcceptor';
import { neverAborted, outboxMessages, uniqueName, waitFor } from './support/sqs';
import { useSqsConsumerFixture } from './support/consumerFixture';

/**
 * The real PgTestAcceptor. The first call of 2 or more inputs times out (a retriable
 * FERRY_TIMEOUT: statement_timeout on a big batch, batch-wide, so the window halves). The input
 * offered alone next is `bad`: every call holding it fails with a retriable FERRY_DATABASE_ERROR
 * (a database error of unknown cause). Which of the two SQS returns first does not matter.
 */
class TimeoutThenBad implements InboxAcceptor {
  bad: string | null = null;
  readonly offered: string[][] = [];
  constructor(readonly inner: PgTestAcceptor) {}
  get maxPayloadBytes(): number {
    return this.inner.maxPayloadBytes;
  }
  acceptMany(inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> {
    const ids = inputs.map((i) => i.messageId);
    this.offered.push(ids);
    if (this.offered.length === 1 && ids.length > 1)
      return Promise.reject(
        new FerryError('FERRY_TIMEOUT', 'canceling statement due to statement timeout (57014)', {
          retriable: true,
        }),
      );
    if (this.offered.length === 2 && ids.length === 1) this.bad = ids[0]!;
    if (this.bad !== null && ids.includes(this.bad))
      return Promise.reject(new FerryError('FERRY_DATABASE_ERROR', 'bad fails'));
    return this.inner.acceptMany(inputs);
  }
}

describe('review 67: the SQS consumer backs off only the messages of the failed offer', () => {
  const f = useSqsConsumerFixture();

  it("does not back off a message never offered since the batch shrank with its neighbour's error", async () => {
    const inner = await f.freshAcceptor();
    const acceptor = new TimeoutThenBad(inner);
    const { queueUrl } = await f.queues.declare({ name: uniqueName('r67-unoffered') });
    const messages = outboxMessages(2, queueUrl);
    const outcomes = await new SqsPublisher(f.connection).publish(messages, neverAborted());
    expect(outcomes.map((o) => o.status)).toEqual(['sent', 'sent']);
    const events: TransportConsumerEvent[] = [];
    const consumer = attachSqsConsumer(acceptor, {
      connection: f.connection,
      consumer: 'orders',
      queueUrl,
      waitTimeSeconds: 1,
      // The hold waits 2 s after the timeout; bad comes back 2 s after its failure.
      retryBackoff: { initialMs: 2_000, maxMs: 2_000, jitter: 'none' },
      observer: (event) => events.push(event),
    });
    f.consumers.push(consumer);
    await consumer.ready();

    const failures = () => events.filter((e) => e.type === 'acceptance-failed');
    await waitFor(
      'the failed offer backed off and the other message stored',
      async () => (failures().length > 0 && (await inner.storedIds()).length > 0 ? true : undefined),
      20_000,
    );
    // The scenario happened: both received in one batch and offered together (timed out), then
    // the window shrank to one and bad, offered alone, failed.
    const ids = messages.map((m) => m.id);
    expect([...acceptor.offered[0]!].sort()).toEqual([...ids].sort());
    const bad = acceptor.bad!;
    expect(acceptor.offered[1]).toEqual([bad]);
    const good = ids.find((id) => id !== bad)!;
    // Only bad was backed off. Before: one backOff of both, `count: 2`, good invisible for the
    // retry backoff with bad's error.
    expect(failures()[0]).toMatchObject({
      type: 'acceptance-failed',
      count: 1,
      error: 'FERRY_DATABASE_ERROR: bad fails',
      delayMs: 2_000,
    });
    // Good went back at once and was accepted alone on the next receive, before bad came back.
    expect(acceptor.offered.slice(0, 3)).toEqual([acceptor.offered[0], [bad], [good]]);
    expect(await inner.storedIds()).toEqual([good]);
    expect(events.filter((e) => e.type === 'dead-lettered')).toEqual([]);
  }, 60_000);
});
