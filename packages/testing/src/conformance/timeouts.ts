import { MAX_TIMER_MS } from '@ferry/core/transport';
import { it } from './jest';

/**
 * Every wait of the suite gets its `timeoutMs`; a case waits more than once (and publishes,
 * attaches, closes in between), and a hook creates or cleans up a transport (its own waits), so
 * jest gives each case and hook this many times `timeoutMs`: the wait that runs out reports
 * first, with its own message, rather than jest's "Exceeded timeout".
 */
export const CASE_TIMEOUT_FACTOR = 3;

/** The largest `timeoutMs`: a case's jest timeout must stay a valid timer delay (2^31 - 1 ms). */
export const MAX_WAIT_TIMEOUT_MS = Math.floor(MAX_TIMER_MS / CASE_TIMEOUT_FACTOR);

/** jest's timeout of each case and hook of a suite waiting `timeoutMs` at a time. */
export function jestTimeout(timeoutMs: number): number {
  return timeoutMs * CASE_TIMEOUT_FACTOR;
}

/** Registers a case with jest's timeout for a suite waiting `timeoutMs` at a time. */
export function timedCases(timeoutMs: number): (name: string, body: () => Promise<void>) => void {
  return (name, body) => it(name, body, jestTimeout(timeoutMs));
}
