import type { ResolvedOutboxOptions } from './options';

/**
 * Delay before the next attempt after `retryCount` failed attempts (retryCount >= 1):
 * exponential `min(maxDelay, initialDelay * 2^(retryCount - 1))`, or fixed `initialDelay`
 * (also capped by maxDelay). Pure; the caller adds it to the database clock.
 */
export function retryDelayMs(retry: ResolvedOutboxOptions['retry'], retryCount: number): number {
  if (retry.backoff === 'fixed') return Math.min(retry.maxDelay, retry.initialDelay);
  // Capped so that 0 * 2^exponent stays 0 (2^1024 would be Infinity and 0 * Infinity NaN).
  const exponent = Math.min(62, Math.max(0, retryCount - 1));
  return Math.min(retry.maxDelay, retry.initialDelay * 2 ** exponent);
}

/** Capped exponential back-off for reconnects and poll errors: initial * 2^failures. */
export function reconnectDelayMs(initial: number, max: number, failures: number): number {
  return Math.min(max, initial * 2 ** Math.min(failures, 30));
}
