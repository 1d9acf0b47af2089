/** Polls a condition until it holds or the deadline passes (no fixed sleeps in the suites). */
export interface WaitOptions {
  /** Deadline in milliseconds (default 30,000). */
  readonly timeoutMs?: number;
  /** Pause between polls in milliseconds (default 100). */
  readonly intervalMs?: number;
}

export class WaitTimeoutError extends Error {
  constructor(
    what: string,
    timeoutMs: number,
    readonly last: unknown,
  ) {
    super(`timed out after ${timeoutMs} ms waiting for ${what}; last value: ${describe(last)}`);
    this.name = 'WaitTimeoutError';
  }
}

function describe(value: unknown): string {
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Resolves with the first truthy value `probe` returns. A probe that throws counts as "not yet"
 * (brokers refuse connections while they restart); the last error is reported on timeout.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | Promise<T>,
  options: WaitOptions = {},
): Promise<NonNullable<T>> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const intervalMs = options.intervalMs ?? 100;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value as NonNullable<T>;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() >= deadline) throw new WaitTimeoutError(what, timeoutMs, last);
    await pause(intervalMs);
  }
}
