import { FERRY_HEADERS } from '@ferry/core';
import { decodeDelivery } from '@ferry/rabbitmq';
import type { Message } from 'amqplib';

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
