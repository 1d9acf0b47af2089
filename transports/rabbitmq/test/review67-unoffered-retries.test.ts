/**
 * Review 67 (failed first): after a FERRY_TIMEOUT the hold offers half the batch; when that half
 * fails with a retriable non-outage error (FERRY_DATABASE_ERROR), only its deliveries go round the
 * retry tiers. Before, every delivery still held was charged a transport retry, including those
 * never offered since the shrink: with maxTransportRetries 0 they were dead-lettered
 * (`transport_retries_exhausted`) with their neighbour's error.
 */
import { FERRY_HEADERS, FerryError, type InboxAcceptInput } from '@ferry/core';
import type { GetMessage } from 'amqplib';
import { uniqueName, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

describe('review 67: RabbitMQ charges a transport retry only to the deliveries of the failed offer', () => {
  const f = useConsumerFixture(() => ({ prefetch: 10 }));

  it("does not dead-letter a delivery never offered since the batch shrank with its neighbour's error", async () => {
    const block = uniqueName('block');
    const bad = uniqueName('bad');
    const good = uniqueName('good');
    const offered: string[][] = [];
    const accepted: string[] = [];
    let timedOut = false;
    let unblock: () => void = () => undefined;
    const blocked = new Promise<void>((resolve) => (unblock = resolve));
    await f.attach({
      maxTransportRetries: 0,
      retryBackoff: { initialMs: 1, maxMs: 2 },
      inbox: {
        maxPayloadBytes: 4_096,
        acceptMany: async (inputs: readonly InboxAcceptInput[]) => {
          const ids = inputs.map((input) => input.messageId);
          offered.push(ids);
          // Holds the first batch until `bad` and `good` wait in the consumer: they come as one batch.
          if (ids.includes(block)) await blocked;
          else if (!timedOut && ids.length > 1) {
            timedOut = true;
            throw new FerryError('FERRY_TIMEOUT', 'statement timeout', { retriable: true });
          } else if (ids.includes(bad)) throw new FerryError('FERRY_DATABASE_ERROR', 'bad fails');
          accepted.push(...ids);
          return ids.map((id) => ({ kind: 'accepted' as const, id: `row-${id}` }));
        },
      },
    });
    const send = (messageId: string) =>
      f.broker.channel.sendToQueue(f.queue, Buffer.from('{}'), {
        messageId,
        contentType: 'application/json',
      });
    send(block);
    await waitFor('the first batch offered', () => (offered.length > 0 ? true : undefined), 10_000);
    send(bad);
    send(good);
    await waitFor(
      'bad and good delivered to the consumer',
      async () => ((await f.broker.channel.checkQueue(f.queue)).messageCount === 0 ? true : undefined),
      10_000,
    );
    unblock();
    const dead: GetMessage[] = [];
    await waitFor(
      'bad dead-lettered and good settled',
      async () => {
        dead.push(...(await f.broker.drain(`${f.queue}.dlq`)));
        const settled = dead.length + accepted.filter((id) => id === good).length;
        return settled >= 2 ? true : undefined;
      },
      30_000,
    );
    // The scenario happened: bad and good offered together, timed out, then bad alone.
    expect(offered).toContainEqual([bad, good]);
    expect(offered).toContainEqual([bad]);
    // Before: both dead-lettered "after 0 transport retries: FERRY_DATABASE_ERROR: bad fails".
    expect(dead.map((letter) => letter.properties.messageId as unknown)).toEqual([bad]);
    expect(dead[0]!.properties.headers).toMatchObject({
      [FERRY_HEADERS.rejectReason]: 'transport_retries_exhausted',
    });
    expect(accepted).toContain(good);
  }, 60_000);
});
