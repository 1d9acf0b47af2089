import { guardLogger, type Logger } from './logger';

/**
 * Calls an observer without letting it affect the caller: a throw or a rejected promise
 * is logged and swallowed. Every observer and hook in ferry goes through here, so a
 * failing observer never changes a row's state.
 */
export function safeEmit<E>(observer: ((event: E) => unknown) | undefined, event: E, logger?: Logger): void {
  if (!observer) return;
  try {
    const result = observer(event);
    if (result && typeof (result as PromiseLike<unknown>).then === 'function') {
      (result as PromiseLike<unknown>).then(undefined, (error: unknown) => report(error, logger));
    }
  } catch (error) {
    report(error, logger);
  }
}

function report(error: unknown, logger?: Logger): void {
  if (logger === undefined) return;
  guardLogger(logger).warn(
    { err: error },
    'ferry observer threw; the event is dropped and processing goes on',
  );
}
