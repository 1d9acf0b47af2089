/** A source of uniform random numbers in [0, 1); injected so tests can pin jitter. */
export type RandomSource = () => number;

/** The capped exponential delay before jitter: min(max, base * 2^(attempt - 1)). */
export function retryCeilingMs(attempt: number, baseMs: number, maxMs: number): number {
  const exponent = Math.max(0, attempt - 1);
  // 2^exponent overflows to Infinity for large attempts; min() then picks the cap.
  return Math.min(maxMs, baseMs * 2 ** exponent);
}

/**
 * Full jitter: a uniformly random delay in [0, ceiling], ceiling from retryCeilingMs.
 * `attempt` is the attempt that just failed (1 for the first).
 */
export function retryDelayMs(attempt: number, baseMs: number, maxMs: number, random: RandomSource): number {
  const ceiling = retryCeilingMs(attempt, baseMs, maxMs);
  const r = Math.min(1, Math.max(0, random()));
  return Math.round(r * ceiling);
}
