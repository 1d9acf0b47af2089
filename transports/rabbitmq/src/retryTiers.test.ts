import type { Message } from 'amqplib';
import { deliveredAs, ORIGIN_HEADERS, trustedTransportAttempts } from './retryTiers';

const tiers = new Set(['orders.retry.100ms']);

function delivery(exchange: string, routingKey: string, headers: Record<string, unknown>): Message {
  return {
    content: Buffer.from('{}'),
    fields: { deliveryTag: 7, redelivered: false, exchange, routingKey, consumerTag: 'c' },
    properties: { headers },
  } as unknown as Message;
}

const origin = { [ORIGIN_HEADERS.exchange]: 'orders', [ORIGIN_HEADERS.routingKey]: 'acme.order.created' };
const expired = { 'x-death': [{ queue: 'orders.retry.100ms', reason: 'expired' }] };

describe('deliveredAs: where a delivery back from a retry tier first arrived', () => {
  it('gives a retry return the exchange and routing key its copy recorded; the delivery tag and counter stay', () => {
    const returned = delivery('', 'orders', { ...origin, ...expired, 'x-ferry-transport-attempts': '2' });
    const seen = deliveredAs(returned, tiers, 'guest');
    expect(seen.fields).toEqual({ ...returned.fields, exchange: 'orders', routingKey: 'acme.order.created' });
    expect(trustedTransportAttempts(returned, tiers)).toBe(2);
  });

  it('ignores the headers on any other delivery: a producer cannot choose what a tenant function reads', () => {
    const forged = delivery('orders', 'globex.order.created', { ...origin });
    expect(deliveredAs(forged, tiers, 'guest')).toBe(forged);
    const otherQueue = delivery('', 'orders', {
      ...origin,
      'x-death': [{ queue: 'elsewhere', reason: 'expired' }],
    });
    expect(deliveredAs(otherQueue, tiers, 'guest')).toBe(otherQueue);
    const rejected = delivery('', 'orders', {
      ...origin,
      'x-death': [{ queue: 'orders.retry.100ms', reason: 'rejected' }],
    });
    expect(deliveredAs(rejected, tiers, 'guest')).toBe(rejected);
  });

  it('leaves a retry return without the headers (a copy made before they existed) as it came', () => {
    const older = delivery('', 'orders', { ...expired });
    expect(deliveredAs(older, tiers, 'guest')).toBe(older);
    const notText = delivery('', 'orders', {
      ...expired,
      [ORIGIN_HEADERS.exchange]: 5,
      [ORIGIN_HEADERS.routingKey]: 'k',
    });
    expect(deliveredAs(notText, tiers, 'guest')).toBe(notText);
  });
});
