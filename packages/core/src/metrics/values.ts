import type { Histogram, LabelValues } from 'prom-client';

/**
 * A number from an observer event as a metric can take it: a negative one (a clock step, a
 * hostile event) is 0, a non-finite one null (not recorded). prom-client throws at NaN and at
 * a negative counter increment, and a histogram's sum must never go down; so an event with one
 * such number still updates its other metrics, and the observer never throws.
 */
export function usable(value: number): number | null {
  if (typeof value !== 'number' || !Number.isFinite(value)) return null;
  return Math.max(0, value);
}

/** An increment for a counter: 0 unless a finite, non-negative number. */
export function count(value: number): number {
  return usable(value) ?? 0;
}

/** Observes milliseconds as seconds; a non-finite duration is left out. */
export function observeMs<L extends string>(
  histogram: Histogram<L>,
  labels: LabelValues<L>,
  ms: number,
): void {
  const value = usable(ms);
  if (value !== null) histogram.observe(labels, value / 1000);
}
