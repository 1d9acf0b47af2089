import { describe, expect, it } from '@jest/globals';
import { FerryError, type InboxAcceptInput, InboxAcceptResult, InboxAcceptor } from '@ferry/core';
import { SqsPublisher, attachSqsConsumer } from '@ferry/sqs';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import type { PgTestAcceptor } from '../../../test-support/pgAcceptor';
import { neverAborted, outboxMessages, uniqueName, waitFor } from './support/sqs';
import { useSqsConsumerFixture } from './support/consumerFixture';

/**
 * The real PgTestAcceptor; every call holding `flaky` fails with a retriable FERRY_DATABASE_ERROR
 * (a deadlock on its row) until it was tried alone once: a transient failure of that one message.
 */
class FlakyOnce implements InboxAcceptor {
  flaky: string | null = null;
  constructor(readonly inner: PgTestAcceptor) {}
  get maxPayloadBytes(): number {
    return this.inner.maxPayloadBytes;
  }
  acceptMany(inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> {
    if (this.flaky !== null && inputs.some((i) => i.messageId === this.flaky)) {
      if (inputs.length === 1) this.flaky = null;
      return Promise.reject(new FerryError('FERRY_DATABASE_ERROR', 'deadlock detected (40P01)'));
    }
    return this.inner.acceptMany(inputs);
  }
}

/**
 * Review finding (failed first), review 19 of 1524e25. A user consumes a FIFO queue (orders of one customer in one MessageGroupId) in the
 * default deadLetter mode 'redrive'. The first message of the group hits a transient, retriable
 * database error on its own row (FERRY_DATABASE_ERROR, a deadlock); its neighbours do not.
 * Contract: FIFO messages of one group are accepted in publish order (consumer.test.ts, "accepts
 * FIFO messages of one group in publish order"); a retriable failure never reorders or loses.
 * What happens: acceptIsolated makes the first message `invalid` (acceptance_failed), it is left in
 * the queue for the redrive policy with the retry backoff, the later messages of its group are
 * accepted and deleted at once, and the first one is accepted when it comes back: the inbox holds
 * the group out of order (and a `dead-lettered` event was reported for a message that was
 * accepted after all).
 */
describe('review19: FIFO group order through a message whose acceptance failed alone', () => {
  const f = useSqsConsumerFixture();

  it('redrive mode: the group is accepted in publish order', async () => {
    const inner = await f.freshAcceptor();
    const acceptor = new FlakyOnce(inner);
    const { queueUrl } = await f.queues.declare({ name: `${uniqueName('r19-fifo-poison')}.fifo` });
    const messages = outboxMessages(3, queueUrl, { orderingKey: 'customer-1' });
    acceptor.flaky = messages[0]!.id;
    const outcomes = await new SqsPublisher(f.connection).publish(messages, neverAborted());
    expect(outcomes.map((o) => o.status)).toEqual(['sent', 'sent', 'sent']);
    const events: TransportConsumerEvent[] = [];
    const consumer = attachSqsConsumer(acceptor, {
      connection: f.connection,
      consumer: 'orders',
      queueUrl,
      waitTimeSeconds: 1,
      retryBackoff: { initialMs: 1_000, maxMs: 1_000, jitter: 'none' },
      observer: (event) => events.push(event),
    });
    f.consumers.push(consumer);
    await consumer.ready();
    await waitFor('3 stored', async () => ((await inner.storedIds()).length >= 3 ? true : undefined), 20_000);
    expect(await inner.storedIds()).toEqual(messages.map((m) => m.id));
  });
});
