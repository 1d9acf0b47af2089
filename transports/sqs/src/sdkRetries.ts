import { AsyncLocalStorage } from 'node:async_hooks';
import { abortableDelay } from '@ferry/core/transport';

/**
 * The SDK's retries of a request, for the client an SqsConnection creates: its standard mode
 * (`maxAttempts` attempts; transient errors and throttling retried after a full-jitter
 * exponential wait from 50 ms, 1 s when throttled, at most 20 s; a Retry-After hint honoured),
 * with each wait between attempts ended by the request's signal. The SDK's own waits are timers
 * nothing cancels: it stops waiting for one at the abort, but the timer still fires after
 * the request's owner closed (an owner's close() resolved, a timer of it fired later). Its retry
 * quota (a client-wide budget of retries) is not kept: each request has its `maxAttempts`.
 */

/** The signal of the request being sent (SqsConnection.request runs the SDK's send in it). */
const requestSignal = new AsyncLocalStorage<AbortSignal>();

/** Runs `send` (one request's SDK call) with its waits between attempts ended by `signal`. */
export function withRequestSignal<T>(signal: AbortSignal, send: () => T): T {
  return requestSignal.run(signal, send);
}

const BASE_DELAY_MS = 50;
const THROTTLING_BASE_DELAY_MS = 1_000;
const MAX_DELAY_MS = 20_000;
/** How far past its computed wait a Retry-After hint may push one (the SDK's). */
const HINT_SLACK_MS = 5_000;

interface Token {
  getRetryCount(): number;
  getRetryDelay(): number;
  getRetryCost(): number | undefined;
}

function token(count: number): Token {
  return { getRetryCount: () => count, getRetryDelay: () => 0, getRetryCost: () => undefined };
}

interface ErrorInfo {
  readonly errorType: string;
  readonly retryAfterHint?: Date;
}

/** A RetryStrategyV2 (the SDK's interface) as described above. */
export function abortableRetries(maxAttempts: number, random: () => number = Math.random) {
  return {
    mode: 'standard',
    acquireInitialRetryToken: async (): Promise<Token> => token(0),
    refreshRetryTokenForRetry: async (previous: Token, info: ErrorInfo): Promise<Token> => {
      const count = previous.getRetryCount();
      const retriable = info.errorType === 'TRANSIENT' || info.errorType === 'THROTTLING';
      if (!retriable || count + 1 >= maxAttempts) throw new Error('No retry token available');
      const base = info.errorType === 'THROTTLING' ? THROTTLING_BASE_DELAY_MS : BASE_DELAY_MS;
      let delay = Math.floor(random() * Math.min(base * 2 ** count, MAX_DELAY_MS));
      // A hint that is no date (the SDK's Date of an unparsable Retry-After header) is left out:
      // its NaN made the wait's timer NaN, which Node runs after 1 ms (review 156).
      const hintAt = info.retryAfterHint instanceof Date ? info.retryAfterHint.getTime() : Number.NaN;
      if (Number.isFinite(hintAt))
        delay = Math.max(delay, Math.min(hintAt - Date.now(), delay + HINT_SLACK_MS));
      const signal = requestSignal.getStore();
      await (signal ? abortableDelay(delay, signal) : new Promise((resolve) => setTimeout(resolve, delay)));
      return token(count + 1);
    },
    recordSuccess: (): void => undefined,
  };
}
