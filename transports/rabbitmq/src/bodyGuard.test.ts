import { createRequire } from 'node:module';
import type { Logger } from '@ferry/core';
import { BodyGuard, unreadBody } from './bodyGuard';

const defs = createRequire(__filename)('amqplib/lib/defs') as Record<string, number>;
const PROPERTIES = defs.BasicProperties!;
const DELIVER = defs.BasicDeliver!;
const ACK = defs.BasicAck!;

type Frame = { id?: number; size?: number; fields?: object; content?: Buffer };

function logger(): Logger & { warnings: unknown[] } {
  const warnings: unknown[] = [];
  const noop = () => undefined;
  return {
    warnings,
    warn: (...args: unknown[]) => void warnings.push(args),
    info: noop,
    error: noop,
    debug: noop,
  } as never;
}

/** A channel whose intake records what reaches amqplib, guarded at `bound`. */
function guarded(bound: number): { seen: Frame[]; accept: (frame: Frame) => void } {
  const seen: Frame[] = [];
  const channel = { accept: (frame: Frame) => void seen.push(frame) };
  expect(new BodyGuard(bound, logger(), 'q').guard(channel)).toBe(true);
  return { seen, accept: (frame) => channel.accept(frame) };
}

const deliver = (): Frame => ({ id: DELIVER, fields: { deliveryTag: 1 } });
const header = (size: number): Frame => ({ id: PROPERTIES, size, fields: { headers: {} } });
const content = (bytes: number): Frame => ({ content: Buffer.alloc(bytes) });

describe('BodyGuard', () => {
  it('hands amqplib a body at the bound, and a zero-size one, as they came', () => {
    const { seen, accept } = guarded(10);
    const frames = [deliver(), header(10), content(4), content(6), deliver(), header(0)];
    for (const frame of frames) accept(frame);
    expect(seen).toEqual(frames);
    expect(unreadBody({ properties: frames[1]!.fields as never })).toBeUndefined();
  });

  it('hands amqplib an empty body for one over the bound once its frames went by, drops them, and reads the next whole', () => {
    const { seen, accept } = guarded(10);
    const over = header(25);
    const next = [deliver(), header(3), content(3)];
    for (const frame of [deliver(), over, content(10), content(10)]) accept(frame);
    // Not complete before its last frame: its copy's confirm would come after the rest of the body.
    expect(seen).toEqual([deliver()]);
    for (const frame of [content(5), ...next]) accept(frame);
    expect(seen).toEqual([deliver(), { ...over, size: 0 }, ...next]);
    expect(over.size).toBe(25); // the frame amqplib read is not changed
    expect(unreadBody({ properties: over.fields as never })).toEqual({ bytes: 25, bound: 10 });
    expect(unreadBody({ properties: next[1]!.fields as never })).toBeUndefined();
  });

  it('hands amqplib a body of one frame in a Buffer of its own, never a view into the socket read', () => {
    const { seen, accept } = guarded(10);
    // As a socket read is: a Buffer of its own, not a slice of Node's shared pool.
    const read = Buffer.alloc(26, '....{"a":1}....{"b":2}....');
    const one = read.subarray(4, 11);
    const first = read.subarray(15, 19);
    const second = read.subarray(19, 22);
    for (const frame of [
      deliver(),
      header(7),
      { content: one },
      deliver(),
      header(7),
      { content: first },
      { content: second },
    ])
      accept(frame);
    const bodies = seen.filter((frame) => frame.content !== undefined).map((frame) => frame.content!);
    expect(bodies.map(String)).toEqual(['{"a":1}', '{"b"', ':2}']);
    expect(bodies[0]!.buffer.byteLength).toBe(7);
    // Several frames: amqplib joins them into a Buffer of its own; they pass as they came.
    expect(bodies.slice(1)).toEqual([first, second]);
    expect(bodies[1]!.buffer).toBe(read.buffer);
  });

  it('passes other frames on during a refused body, and leaves a broken stream to amqplib', () => {
    const { seen, accept } = guarded(10);
    const ack: Frame = { id: ACK, fields: { deliveryTag: 3 } };
    const over = header(20);
    for (const frame of [deliver(), over, content(8), ack, content(8)]) accept(frame);
    expect(seen).toEqual([deliver(), ack]);
    // 4 bytes were left: a frame of 5 is more than announced; the delivery is completed (empty)
    // and amqplib refuses the frame (closes the channel).
    const tooLong = content(5);
    accept(tooLong);
    expect(seen.slice(2)).toEqual([{ ...over, size: 0 }, tooLong]);
    // A delivery before the refused body ended: the refused one completed (empty), the next read as it comes.
    const { seen: seen2, accept: accept2 } = guarded(10);
    const cut = header(20);
    for (const frame of [deliver(), cut, content(8), deliver(), header(2), content(2)]) accept2(frame);
    expect(seen2).toEqual([deliver(), { ...cut, size: 0 }, deliver(), header(2), content(2)]);
  });

  it('keeps amqplib as it is when its channel has no accept or its defs are unknown, warning once', () => {
    const log = logger();
    const guard = new BodyGuard(10, log, 'q');
    expect(guard.guard({})).toBe(false);
    expect(guard.guard({ accept: 'not a function' })).toBe(false);
    expect(log.warnings).toHaveLength(1);
    expect(JSON.stringify(log.warnings)).toMatch(/maxBodyBytes is not applied/);
    const channel = { accept: () => undefined };
    const own = channel.accept;
    expect(new BodyGuard(10, log, 'q', () => null).guard(channel)).toBe(false);
    expect(channel.accept).toBe(own);
  });
});
