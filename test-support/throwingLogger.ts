import type { Logger } from '@ferry/core';

/**
 * A logger every method of which throws (a destination that broke), counting the calls: ferry
 * must lose the lines and nothing else.
 */
export function throwingLogger(): { readonly logger: Logger; readonly calls: () => number } {
  let calls = 0;
  const log = (): void => {
    calls += 1;
    throw new Error('the log destination is gone');
  };
  return { logger: { debug: log, info: log, warn: log, error: log }, calls: () => calls };
}

/** Collects the process's unhandled rejections from now until `stop()`, which returns them. */
export function collectUnhandled(): { readonly stop: () => unknown[] } {
  const reasons: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void reasons.push(reason);
  process.on('unhandledRejection', onUnhandled);
  return {
    stop: () => {
      process.off('unhandledRejection', onUnhandled);
      return reasons;
    },
  };
}
