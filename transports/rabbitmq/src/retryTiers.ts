import type { Message } from 'amqplib';
import { FERRY_HEADERS, FerryConfigError } from '@ferry/core';
import { backoffDelay, type BackoffPolicy } from '@ferry/core/transport';
import { headerText } from './headerValue';

/** More tiers than this means more retry queues than anyone wants to operate. */
export const MAX_RETRY_TIERS = 32;

/** RabbitMQ's bound on `x-message-ttl`. */
const MAX_TTL_MS = 2 ** 32 - 1;

/**
 * The delay tiers (ms) of a retry policy: the un-jittered delay of each retry 1..maxRetries,
 * deduplicated and ascending (at least one tier). A jittered delay is never above its retry's
 * un-jittered delay, so rounding it up to a tier (tierFor) never waits longer than the policy.
 * The delay never falls as the retry grows (multiplier >= 1, capped at maxMs), so each next tier
 * is found by bisection on the first retry whose delay passes the last tier: the cost is bounded
 * by the tiers (at most MAX_RETRY_TIERS + 1), never by maxTransportRetries, which may be as large
 * as Number.MAX_SAFE_INTEGER ("retry for ever"; stepping through each retry never ended).
 */
export function retryTiers(policy: BackoffPolicy, maxTransportRetries: number): number[] {
  const plain: BackoffPolicy = { ...policy, jitter: 'none' };
  const delay = (retry: number): number => Math.max(1, backoffDelay(retry, plain));
  const last = Math.min(Math.max(1, Math.floor(maxTransportRetries)), Number.MAX_SAFE_INTEGER);
  const tiers: number[] = [];
  let retry = 1;
  while (tiers.length <= MAX_RETRY_TIERS) {
    const tier = delay(retry);
    tiers.push(tier);
    if (delay(last) <= tier) break;
    // delay(low) <= tier < delay(high): the next tier begins at high.
    let low = retry;
    let high = last;
    while (high - low > 1) {
      const middle = low + Math.floor((high - low) / 2);
      if (delay(middle) > tier) high = middle;
      else low = middle;
    }
    retry = high;
  }
  return tiers;
}

/** Checks tiers given as an option: 1..32 distinct integers in 1..2^32-1, returned ascending. */
export function checkRetryTiers(tiers: readonly number[]): number[] {
  const sorted = [...new Set(tiers)].sort((a, b) => a - b);
  if (sorted.length === 0 || sorted.length > MAX_RETRY_TIERS) {
    throw new FerryConfigError(
      'retryTiersMs',
      `must hold 1..${MAX_RETRY_TIERS} delays; use a larger retryBackoff.multiplier or fewer maxTransportRetries`,
    );
  }
  if (sorted.some((ms) => !Number.isInteger(ms) || ms < 1 || ms > MAX_TTL_MS)) {
    throw new FerryConfigError('retryTiersMs', `each delay must be an integer between 1 and ${MAX_TTL_MS}`);
  }
  return sorted;
}

/** The smallest tier not shorter than `delayMs` (the longest tier if none is). */
export function tierFor(delayMs: number, tiers: readonly number[]): number {
  return tiers.find((tier) => tier >= delayMs) ?? tiers[tiers.length - 1]!;
}

export function tierQueueName(retryQueue: string, tierMs: number): string {
  return `${retryQueue}.${tierMs}ms`;
}

/**
 * Whether the broker dead-lettered this delivery back out of one of this queue's retry tier
 * queues on expiry: its latest `x-death` entry names the tier queue, reason `expired`, and it
 * came back through the default exchange. Only then are the headers ferry put on its retry copy
 * trusted (trustedTransportAttempts, deliveredAs).
 */
function isRetryReturn(message: Message, retryQueues: ReadonlySet<string>): boolean {
  if (message.fields.exchange !== '') return false;
  const deaths: unknown = message.properties.headers?.['x-death'];
  const latest: unknown = Array.isArray(deaths) ? deaths[0] : undefined;
  if (latest === null || typeof latest !== 'object') return false;
  const { queue, reason } = latest as { queue?: unknown; reason?: unknown };
  return reason === 'expired' && typeof queue === 'string' && retryQueues.has(queue);
}

/**
 * How many trips through the retry tiers this delivery already made. The counter header is
 * trusted only on a retry return (isRetryReturn); on any other delivery it counts as 0, so a
 * producer cannot shorten a message's retries by setting the header.
 */
export function trustedTransportAttempts(message: Message, retryQueues: ReadonlySet<string>): number {
  if (!isRetryReturn(message, retryQueues)) return 0;
  const value = Number(headerText(message.properties.headers?.[FERRY_HEADERS.transportAttempts]) ?? 0);
  return Number.isInteger(value) && value > 0 ? value : 0;
}

/**
 * The headers of a retry copy that keep where the delivery first arrived: the copy goes to its
 * tier queue through the default exchange and comes back with the work queue's name as its
 * routing key, so without them a `tenant` or `identity` function reading the exchange or the
 * routing key read another value after a retry (a message accepted in another tenant's scope).
 */
export const ORIGIN_HEADERS = {
  exchange: 'x-ferry-origin-exchange',
  routingKey: 'x-ferry-origin-routing-key',
  /**
   * The first delivery's `user-id` property, the one RabbitMQ validates against the publishing
   * connection: ferry's connection cannot publish the copy with another user's id, so a tenant
   * function reading it read nothing after a retry (review 43). Absent when it had none.
   */
  userId: 'x-ferry-origin-user-id',
} as const;

/**
 * The delivery as it first arrived: on a retry return (isRetryReturn) that carries
 * ORIGIN_HEADERS, the same message with the exchange, routing key and user-id of its first delivery;
 * otherwise `message` itself. What the tenant and identity functions read, what a retry copy
 * records again, and where a dead-letter copy is routed. Acks and the trust checks use the
 * delivery as the broker sent it.
 */
export function deliveredAs(message: Message, retryQueues: ReadonlySet<string>, copyUserId: string): Message {
  if (!isRetryReturn(message, retryQueues)) return message;
  const exchange: unknown = message.properties.headers?.[ORIGIN_HEADERS.exchange];
  const routingKey: unknown = message.properties.headers?.[ORIGIN_HEADERS.routingKey];
  if (typeof exchange !== 'string' || typeof routingKey !== 'string') return message;
  // The user-id header only on a copy ferry's connection published (its validated user-id,
  // copyUserId): a producer connected as another user can write x-death and this header, not
  // the user-id property (review 46). Otherwise the delivery's own user-id stands.
  const origin: unknown = message.properties.headers?.[ORIGIN_HEADERS.userId];
  const userId =
    message.properties.userId === copyUserId
      ? typeof origin === 'string' && origin !== ''
        ? origin
        : undefined
      : (message.properties.userId as unknown);
  return {
    ...message,
    fields: { ...message.fields, exchange, routingKey },
    properties: { ...message.properties, userId },
  };
}
