/**
 * How many records or topics a publisher remembers of each kind (records given up on unanswered,
 * records not told apart yet, suspect topics): the newest, the oldest dropped. Record ids and
 * topics come from the events, so no such memory may grow with them (review 124: suspect topics).
 */
export const UNANSWERED_KEPT = 10_000;

/** Records `value` as the newest entry of `kept`, dropping the oldest past UNANSWERED_KEPT. */
export function remember(kept: Set<string>, value: string): void {
  kept.delete(value);
  kept.add(value);
  if (kept.size > UNANSWERED_KEPT) {
    const oldest = kept.keys().next().value;
    if (oldest !== undefined) kept.delete(oldest);
  }
}
