import { describe, expect, it } from '@jest/globals';
import { FerryError, type InboxAcceptInput, InboxAcceptResult, InboxAcceptor } from '@ferry/core';
import { SqsPublisher, attachSqsConsumer } from '@ferry/sqs';
import type { PgTestAcceptor } from '../../../test-support/pgAcceptor';
import { neverAborted, outboxMessages, uniqueName, waitFor } from './support/sqs';
import { useSqsConsumerFixture } from './support/consumerFixture';

/**
 * The real PgTestAcceptor. The first call of 2 or more inputs times out (a retriable
 * FERRY_TIMEOUT: statement_timeout on a big batch, batch-wide); every call holding `flaky` then
 * fails with a retriable FERRY_DATABASE_ERROR (a deadlock on its row) until it was tried alone
 * once: a transient failure of that one message.
 */
class TimeoutThenFlaky implements InboxAcceptor {
  flaky: string | null = null;
  timedOut = false;
  readonly offered: string[][] = [];
  constructor(readonly inner: PgTestAcceptor) {}
  get maxPayloadBytes(): number {
    return this.inner.maxPayloadBytes;
  }
  acceptMany(inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> {
    this.offered.push(inputs.map((i) => i.messageId));
    if (!this.timedOut && inputs.length > 1) {
      this.timedOut = true;
      return Promise.reject(
        new FerryError('FERRY_TIMEOUT', 'canceling statement due to statement timeout (57014)', {
          retriable: true,
        }),
      );
    }
    if (this.flaky !== null && inputs.some((i) => i.messageId === this.flaky)) {
      if (inputs.length === 1) this.flaky = null;
      return Promise.reject(new FerryError('FERRY_DATABASE_ERROR', 'deadlock detected (40P01)'));
    }
    return this.inner.acceptMany(inputs);
  }
}

/**
 * Review finding (failed first), review 22 of 7491110 (FIFO group order, groupOrdered). README: "... on a FIFO queue: the
 * batch's messages are then offered one at a time, in order; once one fails alone, the later
 * messages of its MessageGroupId in the batch are not offered ... so a group is never accepted
 * out of order". groupOrdered only sees what acceptHolding offers it at once; after a
 * FERRY_TIMEOUT (batch-wide, sizeMayCause) acceptHolding's OfferWindow offers the held batch in
 * halves, each half a separate groupOrdered call that knows nothing of the failed group of the
 * half before it.
 */
describe('review22: FIFO group order when the held batch is offered in parts after a timeout', () => {
  const f = useSqsConsumerFixture();

  // A user consumes a FIFO queue (3 orders of one customer, one MessageGroupId). The first
  // acceptance of the batch times out (FERRY_TIMEOUT: the batch is held and offered again in
  // halves); in the first half [m1, m2], m1 hits a transient deadlock on its own row.
  // Contract: the group is accepted in publish order (m1, m2, m3), whatever failed transiently.
  // Instead: [m1, m2] are both held (none accepted, retriable), the next part [m3] is a fresh
  // groupOrdered call and m3 is accepted and deleted at once; m1 and m2 are accepted when they
  // come back after the backoff: the inbox holds [m3, m1, m2].
  it.each(['redrive', 'queue'] as const)('%s mode: the group is accepted in publish order', async (mode) => {
    const inner = await f.freshAcceptor();
    const acceptor = new TimeoutThenFlaky(inner);
    const { queueUrl } = await f.queues.declare({ name: `${uniqueName('r22-fifo-window')}.fifo` });
    const deadLetter =
      mode === 'queue'
        ? {
            deadLetter: {
              mode: 'queue' as const,
              queueUrl: (await f.queues.declare({ name: `${uniqueName('r22-fifo-window-dlq')}.fifo` }))
                .queueUrl,
            },
          }
        : {};
    const messages = outboxMessages(3, queueUrl, { orderingKey: 'customer-1' });
    acceptor.flaky = messages[0]!.id;
    const outcomes = await new SqsPublisher(f.connection).publish(messages, neverAborted());
    expect(outcomes.map((o) => o.status)).toEqual(['sent', 'sent', 'sent']);
    const consumer = attachSqsConsumer(acceptor, {
      connection: f.connection,
      consumer: 'orders',
      queueUrl,
      waitTimeSeconds: 1,
      retryBackoff: { initialMs: 200, maxMs: 1_000, jitter: 'none' },
      ...deadLetter,
    });
    f.consumers.push(consumer);
    await consumer.ready();
    await waitFor('3 stored', async () => ((await inner.storedIds()).length >= 3 ? true : undefined), 20_000);
    // the batch arrived whole and was first offered whole (then: [m1, m2], [m1], [m3], ...)
    expect(acceptor.offered[0]).toEqual(messages.map((m) => m.id));
    expect(await inner.storedIds()).toEqual(messages.map((m) => m.id));
  });
});
