/**
 * Bodies that cost the parser: a body over the consumer's maxPayloadBytes and within 6 × it is
 * parsed before it is measured (oversizeBodyFault); a flat array of one-digit numbers costs V8
 * about 50-300 ms per 1.5 MB to parse, and review 87's measure (the inbox's walk) 2 s more. A
 * batch was decoded in one turn of the event loop: a few such deliveries kept amqplib from its
 * heartbeat, the broker closed the connection, every delivery of the batch came back and was
 * parsed again, and the queue stalled with its neighbours (failed first with 24 deliveries). The
 * measure is JSON.stringify again (payloadSizeFault), and decoding gives the event loop its turns
 * between deliveries (eventLoopTurns in the settler's decoding loop).
 *
 * Those turns are checked directly, not through a missed heartbeat (which takes as many slow
 * bodies as the heartbeat has seconds, and at a 1 s heartbeat failed under load with duplicate
 * dead letters): the settler logs each dead letter as soon as its delivery is decoded, and each
 * log schedules a setImmediate that only an event-loop turn runs; by the next dead letter's log
 * it must have run. Without the turns every delivery of a batch is decoded in one turn and none
 * has (the buffer batches the deliveries that keep arriving, so the dense ones share batches).
 */
import { FERRY_HEADERS, type Logger } from '@ferry/core';
import { AMQP_URL } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

/**
 * A logger that notes, at each dead-lettering warning, whether the event loop turned since the
 * previous one (a setImmediate scheduled at that one has run).
 */
function turnWatchingLogger(): { logger: Logger; turnedBetween: boolean[] } {
  const turnedBetween: boolean[] = [];
  let previous: { ran: boolean } | null = null;
  const quiet = () => undefined;
  const logger: Logger = {
    debug: quiet,
    info: quiet,
    error: quiet,
    warn: (fields: object | string, message?: string) => {
      const text = typeof fields === 'string' ? fields : (message ?? '');
      if (!text.includes('dead-lettering a delivery')) return;
      if (previous !== null) turnedBetween.push(previous.ran);
      const mark = { ran: false };
      setImmediate(() => (mark.ran = true));
      previous = mark;
    },
  };
  return { logger, turnedBetween };
}

describe('a batch of bodies that are slow to parse', () => {
  const f = useConsumerFixture(() => ({ prefetch: 100 }));

  it('is decoded with event-loop turns between deliveries, dead-lettered once each, the connection kept; its neighbours are stored', async () => {
    const limit = 262_144;
    const events: { type: string }[] = [];
    const { logger, turnedBetween } = turnWatchingLogger();
    await f.attach({
      maxPayloadBytes: limit,
      // 3 s, as unreadBodies: a loaded machine (load 9) missed a 1 s heartbeat between two slow
      // parses even with the turns, and the redelivered bodies were dead-lettered twice.
      connection: { url: AMQP_URL, heartbeatSeconds: 3 },
      observer: (event) => events.push(event),
      logger,
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
    const hostile = Array.from({ length: 8 }, (_, i) => `dense-${i}`);
    for (const id of hostile) send(id, dense);
    send('after', '{"n":2}');

    const dead = await f.settled(hostile.length + 2, 60_000);
    expect(dead.map((m) => m.properties.headers?.[FERRY_HEADERS.rejectReason])).toEqual(
      hostile.map(() => 'payload_too_large'),
    );
    await f.expectStoredOnce(['before', 'after']);
    expect(events.filter((event) => event.type === 'disconnected')).toEqual([]);
    expect(turnedBetween).toEqual(hostile.slice(1).map(() => true));
  }, 90_000);
});
