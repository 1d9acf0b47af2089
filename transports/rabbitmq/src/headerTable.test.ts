import { createRequire } from 'node:module';
import type { Options } from 'amqplib';
import {
  contentHeaderBytes,
  fitsEveryFrame,
  frameFault,
  headerTableRoom,
  MAX_HEADER_TABLE_BYTES,
  negotiatedFrameMax,
  tableBytes,
} from './headerTable';

/** amqplib's own publish arguments and content header encoder (lib/api_args.js, lib/defs.js). */
const load = createRequire(__filename);
const args = load('amqplib/lib/api_args') as {
  publish(exchange: string, routingKey: string, options: Options.Publish): Record<string, unknown>;
};
const defs = load('amqplib/lib/defs') as {
  BasicProperties: number;
  encodeProperties(id: number, channel: number, size: number, fields: Record<string, unknown>): Buffer;
};
const frameBytes = (options: Options.Publish): number =>
  defs.encodeProperties(defs.BasicProperties, 1, 10, args.publish('x', 'k', options)).length;

describe('contentHeaderBytes', () => {
  it.each<[string, Options.Publish]>([
    ['nothing', {}],
    ['headers only', { headers: { a: 'b'.repeat(3_000), n: 1 } }],
    [
      'every property',
      {
        persistent: true,
        priority: 3,
        contentType: 'application/json',
        contentEncoding: 'utf-8',
        correlationId: 'c'.repeat(255),
        replyTo: 'r',
        expiration: 6_000,
        messageId: 'Zürich',
        timestamp: 1_700_000_000,
        type: 't',
        userId: 'guest',
        appId: 'ferry',
        headers: { 'x-ferry-id': 'abc' },
      },
    ],
  ])('bounds the frame amqplib writes from above (%s)', (_, options) => {
    expect(contentHeaderBytes(options)).toBeGreaterThanOrEqual(frameBytes(options));
    // Close above: deliveryMode, priority and timestamp always counted (10), a number as 9 bytes.
    expect(contentHeaderBytes(options) - frameBytes(options)).toBeLessThanOrEqual(20);
  });

  it('leaves a header table headerTableRoom bytes of a frame_max', () => {
    const options: Options.Publish = { messageId: 'm'.repeat(200), persistent: true };
    const room = headerTableRoom(options, 4_096);
    const headers = { big: 'a'.repeat(room - tableBytes({ big: '' })) };
    expect(tableBytes(headers)).toBe(room);
    expect(frameFault({ ...options, headers }, 4_096)).toBeNull();
    expect(frameFault({ ...options, headers: { ...headers, more: 'x' } }, 4_096)).toMatch(
      /frame_max is 4096 bytes/,
    );
  });

  it('knows no frame_max amqplib does not report', () => {
    expect(negotiatedFrameMax({ connection: { frameMax: 4_096 } })).toBe(4_096);
    expect(negotiatedFrameMax({ connection: {} })).toBeUndefined();
    expect(frameFault({ headers: { a: 'b'.repeat(10_000) } }, undefined)).toBeNull();
  });

  it('needs no sizing at a frame_max that any publish within the header table limit fits (the default)', () => {
    const longest = 's'.repeat(255);
    const options: Options.Publish = {
      persistent: true,
      priority: 9,
      timestamp: 1_700_000_000,
      contentType: longest,
      contentEncoding: longest,
      correlationId: longest,
      replyTo: longest,
      expiration: longest,
      messageId: longest,
      type: longest,
      userId: longest,
      appId: longest,
    };
    const headers = { big: 'a'.repeat(MAX_HEADER_TABLE_BYTES - tableBytes({ big: '' })) };
    expect(tableBytes(headers)).toBe(MAX_HEADER_TABLE_BYTES);
    const bound = contentHeaderBytes({ ...options, headers });
    expect(fitsEveryFrame(131_072)).toBe(true);
    expect(fitsEveryFrame(undefined)).toBe(true);
    expect(fitsEveryFrame(bound - 1)).toBe(false);
    expect(fitsEveryFrame(4_096)).toBe(false);
    expect(frameFault({ ...options, headers }, bound)).toBeNull();
  });
});
