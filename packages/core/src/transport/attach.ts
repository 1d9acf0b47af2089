import type { InboxAcceptor } from '../contracts';
import { FerryError } from '../errors';
import { integerOption, knownKeysOption } from '../optionChecks';
import { closedError } from './errors';

export interface ReadyOptions {
  /** How long ready() waits for the consumer to attach. Default 60,000 ms. */
  timeoutMs?: number;
}

export const DEFAULT_READY_TIMEOUT_MS = 60_000;

/**
 * Every transport's attach function calls this first: an inbox that has handlers refuses a
 * consumer name none of them takes (FERRY_HANDLER_MISSING), instead of accepting deliveries
 * that would sit PENDING for ever.
 */
export function checkAttachable(acceptor: InboxAcceptor, consumer: string): void {
  acceptor.assertHandles?.(consumer);
}

/**
 * ready() of every transport's consumer: resolves when `ready` does; rejects with FERRY_CLOSED
 * once `closed` aborts and with FERRY_TIMEOUT (retriable) after `timeoutMs`, e.g. while the
 * broker is unreachable. The consumer keeps trying to attach after a timeout.
 */
export function awaitReady(
  what: string,
  ready: Promise<void>,
  closed: AbortSignal,
  options: ReadyOptions = {},
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    // Inside the executor, so a bad option rejects like every other ready() failure.
    knownKeysOption('', options, ['timeoutMs']);
    const timeoutMs = integerOption(
      'timeoutMs',
      options.timeoutMs ?? DEFAULT_READY_TIMEOUT_MS,
      0,
      2_147_483_647,
    );
    const onClosed = () => finish(() => reject(closedError(what)));
    const timer = setTimeout(
      () =>
        finish(() =>
          reject(
            new FerryError('FERRY_TIMEOUT', `${what} was not ready within ${timeoutMs} ms`, {
              details: { timeoutMs },
            }),
          ),
        ),
      timeoutMs,
    );
    timer.unref();
    function finish(settle: () => void): void {
      clearTimeout(timer);
      closed.removeEventListener('abort', onClosed);
      settle();
    }
    if (closed.aborted) return onClosed();
    closed.addEventListener('abort', onClosed, { once: true });
    ready.then(
      () => finish(resolve),
      (error: unknown) => finish(() => reject(error)),
    );
  });
}
