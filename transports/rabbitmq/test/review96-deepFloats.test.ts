/**
 * Review finding (failed first), review 96. A body that may hold a float beyond 2^53-1 (`1e16`, as
 * Python and Java write a large double) is walked once after JSON.parse to note where each such
 * float is (core noteParsedBody), so acceptance keeps that very float there. The walk built each
 * value's path string (`payload.kkk….kkk[123]`) and keyed a map by it: every value cost its whole
 * path, up to 64 levels of 64-character keys (some 4 KB), so a body of 300,000 `1e16` under 62
 * such keys, within 6 × the inbox's default 256 KiB, took seconds of one turn of the event loop.
 * What the user sees: the consumer misses its heartbeats at each such delivery, the broker closes
 * the connection, the delivery comes back and is parsed again: the queue stalls for good, its
 * neighbours with it.
 * What should happen: the body is dead-lettered (its payload is over the limit), its neighbours
 * stored, nothing left unacked.
 */
import { FERRY_HEADERS } from '@ferry/core';
import { AMQP_URL } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

/** The inbox's default maxPayloadBytes: a body within 6 × it is parsed. */
const LIMIT = 262_144;

/** A body of 62 levels of 64-character keys around an array of `1e16`, as long as 6 × LIMIT allows. */
function deepFloats(): string {
  const key = 'k'.repeat(64);
  const open = `{"${key}":`.repeat(62);
  const close = '}'.repeat(62);
  const count = Math.floor((6 * LIMIT - open.length - close.length - 2) / 5);
  return `${open}[${Array.from({ length: count }, () => '1e16').join(',')}]${close}`;
}

describe('review96: a body of many large floats under deep keys on the RabbitMQ consumer', () => {
  const f = useConsumerFixture(() => ({ prefetch: 50 }));

  it('dead-letters it without missing heartbeats, and its neighbours go through', async () => {
    await f.attach({ maxPayloadBytes: LIMIT, connection: { url: AMQP_URL, heartbeatSeconds: 1 } });
    const body = deepFloats();
    expect(body.length).toBeLessThanOrEqual(6 * LIMIT);
    const send = (messageId: string, content: string): void => {
      f.broker.channel.sendToQueue(f.queue, Buffer.from(content), {
        messageId,
        contentType: 'application/json',
      });
    };
    send('before', '{"n":1}');
    const hostile = ['floats-0', 'floats-1', 'floats-2'];
    for (const id of hostile) send(id, body);
    send('after', '{"n":2}');

    const dead = await f.settled(hostile.length + 2, 60_000);
    expect(
      Object.fromEntries(
        dead.map((m) => [m.properties.messageId, m.properties.headers?.[FERRY_HEADERS.rejectReason]]),
      ),
    ).toEqual(Object.fromEntries(hostile.map((id) => [id, 'payload_too_large'])));
    await f.expectStoredOnce(['before', 'after']);
  }, 120_000);
});
