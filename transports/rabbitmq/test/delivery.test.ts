import { FERRY_HEADERS } from '@ferry/core';
import { decodeDelivery } from '@ferry/rabbitmq';
import type { Message } from 'amqplib';
import { gzipSync } from 'node:zlib';

/** A delivery as amqplib hands it over; only the fields decodeDelivery reads are filled in. */
function delivery(body: string, properties: Record<string, unknown> = {}): Message {
  return {
    content: Buffer.from(body),
    fields: { deliveryTag: 1, exchange: '', routingKey: 'q', redelivered: false },
    properties: { contentType: 'application/json', ...properties },
  } as unknown as Message;
}

const options = {
  consumer: 'billing',
  maxPayloadBytes: 64,
  contentTypes: ['application/json'],
  acceptMissingContentType: true,
  tenant: 'header' as const,
};

describe('decodeDelivery', () => {
  it("prefers ferry's message-id header over the AMQP messageId and passes tenant, type and headers on", () => {
    const decoded = decodeDelivery(
      delivery('{"a":1}', {
        messageId: 'amqp',
        type: 'amqp.type',
        headers: {
          [FERRY_HEADERS.messageId]: 'ferry',
          [FERRY_HEADERS.tenantId]: 'acme',
          [FERRY_HEADERS.eventType]: 'order.placed',
          [FERRY_HEADERS.transportAttempts]: 2,
          'x-death': [{ count: 1 }],
          other: Buffer.from('b'),
        },
      }),
      options,
    );
    expect(decoded).toEqual({
      ok: true,
      input: {
        consumer: 'billing',
        messageId: 'ferry',
        tenantId: 'acme',
        type: 'order.placed',
        system: 'rabbitmq',
        payload: { a: 1 },
        headers: {
          [FERRY_HEADERS.messageId]: 'ferry',
          [FERRY_HEADERS.tenantId]: 'acme',
          [FERRY_HEADERS.eventType]: 'order.placed',
          other: 'b',
        },
      },
    });
  });

  it('uses the extractor only when neither the header nor the messageId carries an identity', () => {
    const extractor = { ...options, identity: () => 'extracted', tenant: () => 'from-extractor' };
    expect(decodeDelivery(delivery('{}', { messageId: 'amqp' }), extractor)).toMatchObject({
      input: { messageId: 'amqp', tenantId: 'from-extractor' },
    });
    expect(decodeDelivery(delivery('{}'), extractor)).toMatchObject({ input: { messageId: 'extracted' } });
  });

  it('refuses a body that is not valid UTF-8 instead of storing replacement characters', () => {
    const broken = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    const raw = { ...delivery('', { messageId: 'm' }), content: broken } as Message;
    expect(decodeDelivery(raw, options)).toMatchObject({
      ok: false,
      reason: 'unparseable_body',
      detail: 'body is not valid UTF-8',
    });
  });

  it('dead-letters a ferry identity, tenant or type header whose bytes are not UTF-8 as invalid_text naming it, never the AMQP messageId or the extractor in its place; UTF-8 bytes decode', () => {
    const notUtf8 = Buffer.from([0xff, 0x61]);
    const withHeaders = (headers: Record<string, unknown>) =>
      decodeDelivery(delivery('{}', { messageId: 'amqp', headers }), {
        ...options,
        identity: () => 'extracted',
      });
    expect(withHeaders({ [FERRY_HEADERS.messageId]: notUtf8 })).toEqual({
      ok: false,
      reason: 'invalid_text',
      detail: `the ${FERRY_HEADERS.messageId} header is bytes that are not valid UTF-8`,
      messageId: null,
    });
    expect(withHeaders({ [FERRY_HEADERS.messageId]: 'm', [FERRY_HEADERS.tenantId]: notUtf8 })).toEqual({
      ok: false,
      reason: 'invalid_text',
      detail: `the ${FERRY_HEADERS.tenantId} header is bytes that are not valid UTF-8`,
      messageId: 'm',
    });
    expect(withHeaders({ [FERRY_HEADERS.eventType]: notUtf8 })).toMatchObject({
      ok: false,
      reason: 'invalid_text',
      detail: expect.stringContaining(FERRY_HEADERS.eventType),
    });
    const utf8 = withHeaders({
      [FERRY_HEADERS.messageId]: Buffer.from('m-é'),
      [FERRY_HEADERS.tenantId]: Buffer.from('zürich'),
      [FERRY_HEADERS.eventType]: Buffer.from('order.placed'),
    });
    expect(utf8).toMatchObject({
      ok: true,
      input: { messageId: 'm-é', tenantId: 'zürich', type: 'order.placed' },
    });
  });

  it('reads every field-table type amqplib decodes: a ferry header that is present but not text, an exact integer or UTF-8 bytes is invalid_text naming what it is, never replaced by the AMQP messageId', () => {
    // As amqplib decodes the Java client's types: 'l' beyond 2^53 rounded, 'D' and 'T' tagged, 'F', 'A'.
    const unreadable: Array<[unknown, string]> = [
      [true, 'a boolean, not text'],
      [1.5, 'a number that is not an integer'],
      [9_007_199_254_740_992, 'an integer beyond ±(2^53 − 1), which amqplib does not read exactly'],
      [{ '!': 'decimal', value: { places: 1, digits: 15 } }, 'a decimal, not text'],
      [{ '!': 'timestamp', value: 1_700_000_000 }, 'a timestamp, not text'],
      [{ id: 'inner' }, 'a field table, not text'],
      [['inner'], 'a field array, not text'],
      ['id-\uFFFD', 'a long string holding U+FFFD: amqplib decodes bytes that are not UTF-8 to it'],
    ];
    for (const [value, what] of unreadable) {
      for (const name of [FERRY_HEADERS.messageId, FERRY_HEADERS.tenantId, FERRY_HEADERS.eventType]) {
        const decoded = decodeDelivery(
          delivery('{}', { messageId: 'amqp', type: 'amqp', headers: { [name]: value } }),
          options,
        );
        expect(decoded).toMatchObject({
          ok: false,
          reason: 'invalid_text',
          detail: `the ${name} header is ${what}`,
        });
      }
    }
    const read = (value: unknown) =>
      decodeDelivery(
        delivery('{}', { messageId: 'amqp', headers: { [FERRY_HEADERS.messageId]: value } }),
        options,
      );
    expect(read(-42)).toMatchObject({ ok: true, input: { messageId: '-42' } });
    expect(read(9_007_199_254_740_991)).toMatchObject({ ok: true, input: { messageId: '9007199254740991' } });
    // The AMQP messageId, a short string amqplib decodes as lossily, is refused likewise.
    expect(decodeDelivery(delivery('{}', { messageId: 'id-\uFFFD' }), options)).toMatchObject({
      ok: false,
      reason: 'invalid_text',
      detail: 'the AMQP messageId holds U+FFFD: amqplib decodes bytes that are not UTF-8 to it',
    });
    // Void (null) and empty are absent: the AMQP messageId stands in.
    expect(read(null)).toMatchObject({ ok: true, input: { messageId: 'amqp' } });
    expect(read('')).toMatchObject({ ok: true, input: { messageId: 'amqp' } });
  });

  it('stores an application header as text when it is text, UTF-8 bytes or an exact number or boolean, and leaves out the rest', () => {
    const headers = {
      text: 'Zürich',
      bytes: Buffer.from('Zürich'),
      integer: -7,
      fraction: 2.25,
      boolean: false,
      rounded: 9_007_199_254_740_992,
      void: null,
      decimal: { '!': 'decimal', value: { places: 2, digits: 1234 } },
      timestamp: { '!': 'timestamp', value: 1_700_000_000 },
      table: { a: 1 },
      array: [1],
    };
    const decoded = decodeDelivery(delivery('{}', { messageId: 'm', headers }), options);
    expect(decoded).toMatchObject({ ok: true });
    expect(decoded.ok && decoded.input.headers).toEqual({
      text: 'Zürich',
      bytes: 'Zürich',
      integer: '-7',
      fraction: '2.25',
      boolean: 'false',
    });
  });

  it('names the content encoding of a body it cannot parse (ferry does not decompress)', () => {
    const gzip = { ...delivery('{}', { messageId: 'm', contentEncoding: 'gzip' }), content: gzipSync('{}') };
    expect(decodeDelivery(gzip, options)).toMatchObject({
      ok: false,
      reason: 'unparseable_body',
      detail: 'body is not valid UTF-8 (content encoding gzip)',
    });
    expect(
      decodeDelivery(delivery('{}', { messageId: 'm', contentEncoding: 'UTF-8' }), options),
    ).toMatchObject({
      ok: true,
    });
  });

  it('names the reason a delivery is invalid before acceptance', () => {
    const reasons = [
      decodeDelivery(delivery('{}'), options),
      decodeDelivery(delivery('{', { messageId: 'm' }), options),
      decodeDelivery(delivery('"text"', { messageId: 'm' }), options),
      decodeDelivery(delivery(JSON.stringify({ x: 'y'.repeat(100) }), { messageId: 'm' }), options),
      decodeDelivery(delivery('{}', { messageId: 'm', contentType: 'text/plain' }), options),
      decodeDelivery(delivery('{}', { messageId: 'm', contentType: '' }), {
        ...options,
        acceptMissingContentType: false,
      }),
    ].map((d) => (d.ok ? 'ok' : d.reason));
    expect(reasons).toEqual([
      'missing_identity',
      'unparseable_body',
      'unparseable_body',
      'payload_too_large',
      'unsupported_content_type',
      'unsupported_content_type',
    ]);
  });
});
