import { backoffDelay, type BackoffPolicy } from '@ferry/core/transport';

/** SQS's ceiling for a message's visibility timeout: 12 hours. */
export const MAX_VISIBILITY_SECONDS = 43_200;

/**
 * The visibility timeout (whole seconds, as SQS takes it) that returns a message whose
 * acceptance failed after the backoff of its `receiveCount`-th receive. Rounded up, so a
 * sub-second delay never becomes 0 (an immediate hot loop), and capped at 12 hours.
 */
export function visibilityBackoffSeconds(
  receiveCount: number,
  policy: BackoffPolicy,
  random: () => number = Math.random,
): number {
  const ms = backoffDelay(receiveCount, policy, random);
  return Math.min(MAX_VISIBILITY_SECONDS, Math.max(1, Math.ceil(ms / 1000)));
}
