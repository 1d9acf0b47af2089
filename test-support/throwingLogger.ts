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
