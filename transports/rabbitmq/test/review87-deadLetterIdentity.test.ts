/**
 * Review finding (failed first), review 87. A dead-letter copy carries as `x-ferry-message-id` the
 * identity the consumer used when the delivery had none (review 84, core deadLetterIdentity), so
 * copies of one delivery are one receipt when the dead-letter queue is drained. "Had none" was
 * read as "has no header of that name" (Object.hasOwn), but the consumer reads an empty header as
 * none (readFerryHeaders: nonEmptyValue) and falls back to the identity extractor.
 * What the user sees: a delivery whose producer wrote `x-ferry-message-id: ''` is dead-lettered
 * with its empty header kept and without the identity the consumer used: a drain takes it as a
 * message without identity.
 * What should happen: the copy carries the identity the consumer used, as without the header.
 */
import { FERRY_HEADERS } from '@ferry/core';
import type { GetMessage } from 'amqplib';
import { unackedCount, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

describe('review87: dead-letter identity of a delivery with an empty message-id header', () => {
  const f = useConsumerFixture(() => ({ prefetch: 50 }));

  it('gives the copy the identity the consumer used', async () => {
    await f.attach({ identity: (m) => (m.properties.headers?.['legacy-id'] as string | undefined) ?? null });
    const send = (body: string, headers: Record<string, unknown>) =>
      f.broker.channel.sendToQueue(f.queue, Buffer.from(body), { contentType: 'application/json', headers });
    send('not json', { [FERRY_HEADERS.messageId]: '', 'legacy-id': 'legacy-1' });
    send('not json', { [FERRY_HEADERS.messageId]: Buffer.alloc(0), 'legacy-id': 'legacy-2' });
    send('{"a":1}', { [FERRY_HEADERS.messageId]: 'neighbour' });

    const dead: GetMessage[] = [];
    await waitFor('2 dead letters, nothing unacked', async () => {
      dead.push(...(await f.broker.drain(`${f.queue}.dlq`)));
      return dead.length >= 2 && (await unackedCount(f.queue)) === 0 ? true : undefined;
    });
    expect(
      dead.map((m) => [
        m.properties.headers?.['legacy-id'],
        String(m.properties.headers?.[FERRY_HEADERS.messageId]),
      ]),
    ).toEqual([
      ['legacy-1', 'legacy-1'],
      ['legacy-2', 'legacy-2'],
    ]);
    await f.expectStoredOnce(['neighbour']);
  });
});
