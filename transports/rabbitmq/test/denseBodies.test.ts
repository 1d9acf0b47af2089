/**
 * Bodies that cost the parser: a body over the consumer's maxPayloadBytes and within 6 × it is
 * parsed before it is measured (oversizeBodyFault); a flat array of one-digit numbers costs V8
 * about 100-300 ms per 1.5 MB to parse, and review 87's measure (the inbox's walk) 2 s more. A
 * batch was decoded in one turn of the event loop: a few such deliveries kept amqplib from its
 * heartbeat, the broker closed the connection, every delivery of the batch came back and was
 * parsed again, and the queue stalled with its neighbours (failed first with 24 deliveries). The
 * measure is JSON.stringify again (payloadSizeFault), and decoding gives the event loop its turns
 * between deliveries (without them, 60 deliveries still stalled the queue).
 */
import { FERRY_HEADERS } from '@ferry/core';
import { AMQP_URL } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

describe('a batch of bodies that are slow to parse', () => {
  const f = useConsumerFixture(() => ({ prefetch: 100 }));

  it('is dead-lettered without the connection losing its heartbeat; its neighbours are stored', async () => {
    const limit = 262_144;
    const events: { type: string }[] = [];
    await f.attach({
      maxPayloadBytes: limit,
      connection: { url: AMQP_URL, heartbeatSeconds: 1 },
      observer: (event) => events.push(event),
    });
    const count = Math.floor((6 * limit - 8) / 2);
    const dense = `{"a":[${Array.from({ length: count }, () => '1').join(',')}]}`;
    expect(dense.length).toBeLessThanOrEqual(6 * limit);
    const send = (messageId: string, body: string) =>
      f.broker.channel.sendToQueue(f.queue, Buffer.from(body), {
        messageId,
        contentType: 'application/json',
      });
    send('before', '{"n":1}');
    const hostile = Array.from({ length: 60 }, (_, i) => `dense-${i}`);
    for (const id of hostile) send(id, dense);
    send('after', '{"n":2}');

    const dead = await f.settled(hostile.length + 2, 90_000);
    expect(dead.map((m) => m.properties.headers?.[FERRY_HEADERS.rejectReason])).toEqual(
      hostile.map(() => 'payload_too_large'),
    );
    await f.expectStoredOnce(['before', 'after']);
    expect(events.filter((event) => event.type === 'disconnected')).toEqual([]);
  }, 120_000);
});
