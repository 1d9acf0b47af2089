/**
 * Review of issue 11: "no publisher lets an event's own headers set ferry's". emit refuses
 * reserved header names now, but a row written before that (or by SQL, or by another tool)
 * still carries them, and the RabbitMQ publisher passed an event header named like an unset
 * ferry header (`x-ferry-tenant-id` on an event without a tenant) to the wire, where the
 * consumer takes it as the tenant.
 */
import { FERRY_HEADERS } from '@ferry/core';
import { decodeDelivery, encodeMessage } from '@ferry/rabbitmq';
import type { Message } from 'amqplib';
import { testOutboxMessage } from '../../../test-support/outboxMessages';

const forged = {
  [FERRY_HEADERS.tenantId]: 'victim',
  [FERRY_HEADERS.causationId]: 'forged-cause',
  'X-Ferry-Tenant-Id': 'victim',
  Traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  'x-app': 'kept',
};

test('an event header named like a ferry header never reaches the wire, in any case, and the consumer does not read it as the tenant', () => {
  const message = testOutboxMessage({ tenantId: null, headers: forged });
  const { content, options } = encodeMessage(message);
  const headers = options.headers as Record<string, unknown>;
  expect(
    Object.keys(headers)
      .filter((name) => /^(x-ferry-|traceparent$|tracestate$)/i.test(name))
      .sort(),
  ).toEqual([FERRY_HEADERS.eventType, FERRY_HEADERS.messageId].sort());
  expect(headers['x-app']).toBe('kept');
  const delivered = {
    content,
    fields: { deliveryTag: 1, exchange: 'x', routingKey: 'q', redelivered: false },
    properties: options,
  } as unknown as Message;
  const decoded = decodeDelivery(delivered, {
    consumer: 'billing',
    maxPayloadBytes: 1_024,
    contentTypes: ['application/json'],
    acceptMissingContentType: true,
    tenant: 'header',
  });
  expect(decoded.ok && decoded.input.tenantId).toBeNull();
});
