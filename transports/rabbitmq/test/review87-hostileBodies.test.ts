/**
 * Review finding (failed first), review 87. The consumer's `maxPayloadBytes` is measured on the
 * parsed payload (src/delivery.ts payloadSizeFault: JSON.stringify of what JSON.parse gave) for a
 * body over it in bytes and within 6 × it (oversizeBodyFault). JSON.parse is iterative; JSON.stringify
 * recurses. A body of nested arrays (`{"a":[[[…]]]}`, 2 bytes a level: 5,000 levels in 10 KB, within
 * 6 × the test acceptor's 4,096, and 200,000 levels within 6 × the inbox's default 256 KiB) parses,
 * then overflows the stack when measured.
 * What the user sees: a RangeError ("Maximum call stack size exceeded") thrown out of the batch;
 * the hostile delivery and every neighbour of its batch stay unacked, nothing is stored or
 * dead-lettered, the queue stalls.
 * What should happen: dead-lettered with the reason the inbox gives such a payload
 * (`payload_too_deep`), its neighbours stored, nothing left unacked.
 */
import { FERRY_HEADERS } from '@ferry/core';
import type { GetMessage } from 'amqplib';
import { AMQP_URL, unackedCount, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

describe('review87: hostile bodies on the RabbitMQ consumer', () => {
  const f = useConsumerFixture(() => ({ prefetch: 50 }));

  function send(messageId: string, body: string): void {
    f.broker.channel.sendToQueue(f.queue, Buffer.from(body), { messageId, contentType: 'application/json' });
  }

  async function settle(count: number): Promise<GetMessage[]> {
    const dead: GetMessage[] = [];
    await waitFor(`${count} settled (stored or dead-lettered)`, async () => {
      dead.push(...(await f.broker.drain(`${f.queue}.dlq`)));
      const stored = (await f.acceptor.storedIds()).length;
      return dead.length + stored >= count && (await unackedCount(f.queue)) === 0 ? true : undefined;
    });
    return dead;
  }

  const reasons = (dead: readonly GetMessage[]) =>
    Object.fromEntries(
      dead.map((m) => [
        m.properties.messageId,
        [
          m.properties.headers?.[FERRY_HEADERS.rejectReason],
          String(m.properties.headers?.['x-ferry-reject-detail']),
        ],
      ]),
    );

  it('dead-letters a deeply nested body over maxPayloadBytes (within 6 × it) and stores its neighbours', async () => {
    const limit = f.acceptor.maxPayloadBytes;
    await f.attach();
    const depth = 5_000;
    const deep = `{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    expect(deep.length).toBeGreaterThan(limit);
    expect(deep.length).toBeLessThan(6 * limit);
    send('before', '{"n":1}');
    send('deep', deep);
    send('after', '{"n":2}');

    const dead = await settle(3);
    expect(reasons(dead)).toEqual({
      deep: ['payload_too_deep', expect.stringMatching(/deeper than 64/)],
    });
    await f.expectStoredOnce(['before', 'after']);
  });

  // Review 87 (failed first): JSON.parse of nested arrays costs V8 about 10 times a flat body of
  // the same size (1.5 s for the 1.5 MB within 6 × the inbox's default 256 KiB, here). The batch
  // is decoded in one turn of the event loop: a dozen such deliveries kept it from the heartbeat,
  // the broker closed the connection, every delivery of the batch came back, and was parsed
  // again: the queue stalled for good, its neighbours with it. No payload nested past the inbox's
  // 64 levels can be accepted, so such a body is refused unparsed.
  it('refuses a body nested past 64 levels unparsed, and its neighbours go through', async () => {
    const limit = 262_144;
    await f.attach({ maxPayloadBytes: limit, connection: { url: AMQP_URL, heartbeatSeconds: 1 } });
    const depth = Math.floor((6 * limit - 8) / 2);
    const deep = `{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    expect(deep.length).toBeLessThanOrEqual(6 * limit);
    send('before', '{"n":1}');
    const hostile = Array.from({ length: 12 }, (_, i) => `deep-${i}`);
    for (const id of hostile) send(id, deep);
    send('after', '{"n":2}');
    // 65 levels: refused; 64: taken (within the inbox's limit).
    send('deep-65', `{"a":${'['.repeat(64)}${']'.repeat(64)}}`);
    send('deep-64', `{"a":${'['.repeat(63)}${']'.repeat(63)}}`);

    const dead = await settle(hostile.length + 4);
    expect(reasons(dead)).toEqual(
      Object.fromEntries(
        [...hostile, 'deep-65'].map((id) => [
          id,
          ['payload_too_deep', expect.stringMatching(/^body nests deeper than 64 levels/)],
        ]),
      ),
    );
    await f.expectStoredOnce(['before', 'after', 'deep-64']);
  }, 120_000);
});
