import { createRequire } from 'node:module';
import type { MessageProperties } from 'amqplib';
import {
  DROPPED_HEADERS,
  MAX_COPY_HEADER_BYTES,
  copyHeaders,
  copyOptions,
  shortString,
  tableBytes,
} from './copyOptions';
import { contentHeaderBytes } from './headerTable';

/** amqplib's own table encoder, into a buffer the size of its scratch buffer (lib/defs.js). */
const codec = createRequire(__filename)('amqplib/lib/codec') as {
  encodeTable(buffer: Buffer, table: Readonly<Record<string, unknown>>, offset: number): number;
};
const encodedBytes = (table: Readonly<Record<string, unknown>>): number =>
  codec.encodeTable(Buffer.alloc(MAX_COPY_HEADER_BYTES), table, 0);

/** Every field-table type as amqplib decodes it. */
const everyType = {
  text: 'Zürich',
  bytes: Buffer.from([1, 2, 3]),
  integer: -7,
  long: 1_234_567_890_123,
  fraction: 2.25,
  boolean: true,
  void: null,
  decimal: { '!': 'decimal', value: { places: 2, digits: 4_294_967_295 } },
  timestamp: { '!': 'timestamp', value: 1_700_000_000 },
  table: { a: 1, b: 'two', c: { d: [1, 'x', null] } },
  array: [1, 'two', 2.5, null, { e: Buffer.from('f') }],
};

describe('copyHeaders', () => {
  it("keeps the delivery's headers but x-death, with ferry's over them, and bounds amqplib's encoding from above", () => {
    const headers = copyHeaders(
      { ...everyType, 'x-death': [{ count: 1 }], 'x-ferry-reject-reason': 'old' },
      {
        'x-ferry-reject-reason': 'unparseable_body',
      },
    );
    expect(headers).toEqual({ ...everyType, 'x-ferry-reject-reason': 'unparseable_body' });
    expect(tableBytes(headers)).toBeGreaterThanOrEqual(encodedBytes(headers));
  });

  it("leaves the largest headers out of a table amqplib cannot encode, names them, and keeps the rest and ferry's", () => {
    const original = {
      ...everyType,
      'x-huge': 'H'.repeat(70_000),
      'x-big': Buffer.alloc(40_000),
      'x-small': 's',
    };
    expect(() => encodedBytes({ ...original, 'x-ferry-reject-reason': 'headers_too_large' })).toThrow(
      /out of range/,
    );
    const headers = copyHeaders(original, { 'x-ferry-reject-reason': 'headers_too_large' });
    expect(headers).toEqual({
      ...everyType,
      'x-big': Buffer.alloc(40_000),
      'x-small': 's',
      'x-ferry-reject-reason': 'headers_too_large',
      [DROPPED_HEADERS]: 'x-huge',
    });
    expect(encodedBytes(headers)).toBeLessThanOrEqual(MAX_COPY_HEADER_BYTES);
  });

  it('leaves out a header amqplib cannot encode: a name over 255 bytes, there or in a nested table', () => {
    const lossy = '\ufffd'.repeat(100);
    const original = {
      'x-small': 's',
      [lossy]: 'decoded from 100 bytes that were not UTF-8',
      nested: { a: { [lossy]: 1 } },
      listed: [1, { [lossy]: 2 }],
      fine: { b: [{ c: 3 }] },
    };
    expect(() => encodedBytes(original)).toThrow();
    const headers = copyHeaders(original, { 'x-ferry-reject-reason': 'unparseable_body' });
    expect(headers).toEqual({
      'x-small': 's',
      fine: { b: [{ c: 3 }] },
      'x-ferry-reject-reason': 'unparseable_body',
      [DROPPED_HEADERS]: `${lossy}, nested, listed`,
    });
    expect(encodedBytes(headers)).toBeLessThanOrEqual(MAX_COPY_HEADER_BYTES);
  });

  it('keeps a header named __proto__ as its own', () => {
    const headers = copyHeaders(JSON.parse('{"__proto__": "p"}') as Record<string, unknown>, {});
    expect(Object.entries(headers)).toEqual([['__proto__', 'p']]);
  });

  it('leaves out as many of many small headers as it takes', () => {
    const original = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`h${i}`, i]));
    const headers = copyHeaders(original, { 'x-ferry-reject-reason': 'headers_too_large' });
    expect(headers['x-ferry-reject-reason']).toBe('headers_too_large');
    expect(String(headers[DROPPED_HEADERS]).length).toBeLessThanOrEqual(1_000);
    expect(encodedBytes(headers)).toBeLessThanOrEqual(MAX_COPY_HEADER_BYTES);
  });
});

describe('copyOptions', () => {
  const properties = (fields: Partial<MessageProperties>): MessageProperties =>
    ({ headers: { 'x-death': [], h: 1 }, ...fields }) as MessageProperties;

  it('keeps every property of the delivery but its expiration and a foreign user-id, persistent, with copyHeaders', () => {
    const kept = {
      contentType: 'application/json; charset=utf-8',
      contentEncoding: 'UTF-8',
      messageId: 'm'.repeat(255),
      correlationId: 'c',
      replyTo: 'r',
      priority: 9,
      type: 't',
      timestamp: 18_446_744_073_709_552_000,
      appId: 'a',
    };
    // The expiration was the delivery's to the work queue (RabbitMQ's own dead-lettering drops it
    // too); a transient delivery's copy is persistent; a user-id other than the copy
    // connection's own would make RabbitMQ refuse the copy.
    const dropped = { expiration: '1000', userId: 'someone-else', deliveryMode: 1 };
    expect(
      copyOptions(properties({ ...kept, ...dropped }), { 'x-ferry-reject-reason': 'r' }, undefined, 'guest'),
    ).toEqual({
      persistent: true,
      mandatory: true,
      headers: { h: 1, 'x-ferry-reject-reason': 'r' },
      ...kept,
    });
    // The copy connection's own user-id is kept (RabbitMQ accepts it).
    expect(copyOptions(properties({ userId: 'guest' }), {}, undefined, 'guest').userId).toBe('guest');
  });

  it('leaves out a priority that is not an AMQP octet', () => {
    for (const priority of [-1, 256, 1.5, Number.NaN, '9'])
      expect(copyOptions(properties({ priority } as Partial<MessageProperties>), {})).not.toHaveProperty(
        'priority',
      );
    expect(copyOptions(properties({ priority: 0 }), {}).priority).toBe(0);
  });

  it('leaves out a short string amqplib would refuse: over 255 UTF-8 bytes once decoded to U+FFFD', () => {
    const lossy = '\uFFFD'.repeat(100);
    const options = copyOptions(
      properties({
        messageId: lossy,
        correlationId: lossy,
        replyTo: lossy,
        type: lossy,
        appId: lossy,
        contentType: lossy,
      }),
      {},
    );
    expect(options).toEqual({ persistent: true, mandatory: true, headers: { h: 1 } });
    // The routing key of a dead-letter copy likewise (batch.ts: '' instead).
    expect(shortString(lossy)).toBeUndefined();
    expect(shortString('k'.repeat(255))).toBe('k'.repeat(255));
  });
});

describe('copyOptions within a frame_max', () => {
  it('leaves out the largest headers so the content header frame fits the frame_max, naming them', () => {
    const properties = {
      messageId: 'm'.repeat(255),
      contentType: 'application/json',
      headers: { 'x-large': 'a'.repeat(4_000), 'x-small': 'kept' },
    } as unknown as MessageProperties;
    const options = copyOptions(properties, { 'x-ferry-reject-detail': 'd'.repeat(1_000) }, 4_096);
    expect(contentHeaderBytes(options)).toBeLessThanOrEqual(4_096);
    expect(options.headers).toMatchObject({ 'x-small': 'kept', [DROPPED_HEADERS]: 'x-large' });
    expect(options.headers).not.toHaveProperty('x-large');
    // Without a frame_max (amqplib did not say), only amqplib's 64 KiB applies.
    expect(copyOptions(properties, {}).headers).toHaveProperty('x-large');
  });
});
