import { setTimeout as realSetTimeout } from 'node:timers';

/**
 * What `waiting` settles to within `hungAfterMs` of real time (node:timers, which jest's fake
 * timers do not replace): `{ resolved: value }`, its error, or `hung` (review 77).
 */
export function settledOrHung(
  waiting: Promise<unknown>,
  hungAfterMs: number,
  hung = 'hung',
): Promise<unknown> {
  return Promise.race([
    waiting.then(
      (value) => ({ resolved: value }),
      (error: unknown) => error,
    ),
    new Promise((resolve) => realSetTimeout(() => resolve(hung), hungAfterMs)),
  ]);
}
