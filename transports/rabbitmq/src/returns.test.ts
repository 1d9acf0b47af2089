import { EventEmitter } from 'node:events';
import type { Channel, Message } from 'amqplib';
import { watchReturn } from './returns';

function returned(
  exchange: string,
  routingKey: string,
  messageId: string | undefined,
  body: string,
): Message {
  return {
    fields: { exchange, routingKey, replyCode: 312, replyText: 'NO_ROUTE' },
    properties: { messageId, headers: {} },
    content: Buffer.from(body),
  } as unknown as Message;
}

function publish(exchange: string, routingKey: string, messageId: string | undefined, body: string) {
  return { exchange, routingKey, messageId, content: Buffer.from(body) };
}

describe('watchReturn', () => {
  it('marks every unconfirmed publish identical to a return: it cannot tell which one came back', () => {
    const channel = new EventEmitter() as unknown as Channel;
    const other = watchReturn(channel, publish('x', 'k', 'm1', 'b'));
    const body = watchReturn(channel, publish('x', 'k', 'm1', 'other body'));
    const first = watchReturn(channel, publish('x', 'k2', 'm1', 'b'));
    const second = watchReturn(channel, publish('x', 'k2', 'm1', 'b'));
    (channel as unknown as EventEmitter).emit('return', returned('x', 'k2', 'm1', 'b'));
    expect([other, body, first, second].map((w) => w.pending.returned)).toEqual([
      null,
      null,
      'unroutable: 312 NO_ROUTE (exchange "x", routing key "k2")',
      'unroutable: 312 NO_ROUTE (exchange "x", routing key "k2")',
    ]);
  });

  it('a routed publish waiting for its confirm does not take the return of a later identical one', () => {
    // Review: 500 identical persistent publishes routed (their acks wait for the disk), the binding
    // goes, one more identical publish is returned at once. Crediting the oldest reported a routed
    // one `returned` and the unroutable one `confirmed`: lost.
    const channel = new EventEmitter() as unknown as Channel;
    const routed = watchReturn(channel, publish('x', 'k', 'm', 'b'));
    const unroutable = watchReturn(channel, publish('x', 'k', 'm', 'b'));
    (channel as unknown as EventEmitter).emit('return', returned('x', 'k', 'm', 'b'));
    expect(unroutable.pending.returned).toMatch(/^unroutable/);
    routed.done();
    unroutable.done();
  });

  it('an empty messageId and none are not the same publish', () => {
    const channel = new EventEmitter() as unknown as Channel;
    const empty = watchReturn(channel, publish('x', 'k', '', 'b'));
    const none = watchReturn(channel, publish('x', 'k', undefined, 'b'));
    (channel as unknown as EventEmitter).emit('return', returned('x', 'k', undefined, 'b'));
    expect([empty.pending.returned, none.pending.returned]).toEqual([
      null,
      expect.stringMatching(/^unroutable/),
    ]);
  });

  it('matches what came back from the wire: a lone surrogate is U+FFFD there, no messageId is none', () => {
    const channel = new EventEmitter() as unknown as Channel;
    const lone = watchReturn(channel, publish('', 'q\uD800', 'id\uDC00', 'b'));
    const none = watchReturn(channel, publish('', 'q', undefined, 'b'));
    (channel as unknown as EventEmitter).emit('return', returned('', 'q\uFFFD', 'id\uFFFD', 'b'));
    (channel as unknown as EventEmitter).emit('return', returned('', 'q', undefined, 'b'));
    expect([lone.pending.returned, none.pending.returned]).toEqual([
      expect.stringContaining('unroutable'),
      expect.stringContaining('unroutable'),
    ]);
  });

  it('ignores a return of a publish already confirmed or given up on', () => {
    const channel = new EventEmitter() as unknown as Channel;
    const gone = watchReturn(channel, publish('x', 'k', 'm', 'b'));
    gone.done();
    (channel as unknown as EventEmitter).emit('return', returned('x', 'k', 'm', 'b'));
    expect(gone.pending.returned).toBeNull();
  });
});
