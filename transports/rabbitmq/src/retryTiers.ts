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
 */
export function retryTiers(policy: BackoffPolicy, maxTransportRetries: number): number[] {
  const tiers = new Set<number>();
  const plain: BackoffPolicy = { ...policy, jitter: 'none' };
  for (let retry = 1; retry <= Math.max(1, maxTransportRetries); retry++) {
    tiers.add(Math.max(1, backoffDelay(retry, plain)));
    if (tiers.size > MAX_RETRY_TIERS) break;
  }
  return [...tiers].sort((a, b) => a - b);
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
 * How many trips through the retry tiers this delivery already made. The counter header is
 * trusted only when the broker dead-lettered the delivery out of one of this queue's retry
 * tier queues on expiry (its latest `x-death` entry names the tier queue, reason `expired`,
 * and it came back through the default exchange); on any other delivery it counts as 0, so a
 * producer cannot shorten a message's retries by setting the header.
 */
export function trustedTransportAttempts(message: Message, retryQueues: ReadonlySet<string>): number {
  if (message.fields.exchange !== '') return 0;
  const deaths: unknown = message.properties.headers?.['x-death'];
  const latest: unknown = Array.isArray(deaths) ? deaths[0] : undefined;
  if (latest === null || typeof latest !== 'object') return 0;
  const { queue, reason } = latest as { queue?: unknown; reason?: unknown };
  if (reason !== 'expired' || typeof queue !== 'string' || !retryQueues.has(queue)) return 0;
  const value = Number(headerText(message.properties.headers?.[FERRY_HEADERS.transportAttempts]) ?? 0);
  return Number.isInteger(value) && value > 0 ? value : 0;
}
