import type { Message } from 'amqplib';
import { backoffDelay, type BackoffPolicy } from '@ferry/core/transport';
import {
  deliveredAs,
  MAX_RETRY_TIERS,
  ORIGIN_HEADERS,
  retryTiers,
  trustedTransportAttempts,
} from './retryTiers';

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

describe('retryTiers: the delay tiers of a retry policy', () => {
  /** Every retry 1..max stepped through: what retryTiers answers, at any cost. */
  function stepped(policy: BackoffPolicy, max: number): number[] {
    const tiers = new Set<number>();
    for (let retry = 1; retry <= Math.max(1, max); retry++) {
      tiers.add(Math.max(1, backoffDelay(retry, { ...policy, jitter: 'none' })));
      if (tiers.size > MAX_RETRY_TIERS) break;
    }
    return [...tiers].sort((a, b) => a - b);
  }

  it('answers the delays of every retry, deduplicated and ascending', () => {
    for (const initialMs of [1, 7, 1000])
      for (const maxMs of [1000, 30_000, 2_147_483_647])
        for (const multiplier of [1, 1.01, 1.5, 2, 10])
          for (const max of [0, 1, 5, 40, 300]) {
            if (maxMs < initialMs) continue;
            const policy: BackoffPolicy = { initialMs, maxMs, multiplier, jitter: 'full' };
            expect([policy, max, retryTiers(policy, max)]).toEqual([policy, max, stepped(policy, max)]);
          }
  });

  it('answers at once for any maxTransportRetries: a capped backoff has few delays', () => {
    const policy: BackoffPolicy = { initialMs: 1000, maxMs: 60_000, multiplier: 2, jitter: 'full' };
    expect(retryTiers(policy, Number.MAX_SAFE_INTEGER)).toEqual(stepped(policy, 100));
    // Growing slowly: more than MAX_RETRY_TIERS distinct delays, found without a retry-by-retry walk.
    const slow: BackoffPolicy = { initialMs: 1, maxMs: 2_147_483_647, multiplier: 1.000001, jitter: 'none' };
    expect(retryTiers(slow, Number.MAX_SAFE_INTEGER)).toHaveLength(MAX_RETRY_TIERS + 1);
  });
});
