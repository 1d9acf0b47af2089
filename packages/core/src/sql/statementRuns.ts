/**
 * The most characters of JSON text (payloads and headers) one of ferry's batch statements carries
 * in its parameters: emitMany's insert and acceptMany's. node-postgres writes a parameter as one
 * string (an array parameter as one array literal, every `"` and `\` escaped once more: up to
 * twice as long), and past what a JavaScript string can hold (about 2^29 characters) it threw
 * `RangeError: Invalid string length`, a retriable FERRY_DATABASE_ERROR for a batch of items each
 * within its limit (review 135: 34 payloads of 16 MiB, or 2,100 of 256 KiB). A batch with more
 * text goes in several statements, one per run, in order.
 */
export const MAX_STATEMENT_TEXT_CHARS = 64 * 1024 * 1024;

/**
 * `items` in consecutive runs whose summed `size` stays within `max`, in order; an item larger
 * than `max` alone (no run is empty). One run for a batch within the bound. The one splitter of
 * batches by size: statements (statementRuns), a Kafka send's records, SQS dead-letter copies.
 */
export function consecutiveRuns<T>(items: readonly T[], size: (item: T) => number, max: number): T[][] {
  const runs: T[][] = [];
  let run: T[] = [];
  let total = 0;
  for (const item of items) {
    const bytes = size(item);
    if (run.length > 0 && total + bytes > max) {
      runs.push(run);
      run = [];
      total = 0;
    }
    run.push(item);
    total += bytes;
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

/** The bound statementRuns splits at: MAX_STATEMENT_TEXT_CHARS, but in a test (setStatementTextCharsForTests). */
let statementTextChars = MAX_STATEMENT_TEXT_CHARS;

/**
 * Tests only (not exported from the package): splits statements at `chars` (undefined restores
 * MAX_STATEMENT_TEXT_CHARS), so a batch in several statements takes kilobytes, not 64 Mi
 * characters, to build.
 */
export function setStatementTextCharsForTests(chars: number | undefined): void {
  statementTextChars = chars ?? MAX_STATEMENT_TEXT_CHARS;
}

/** `items` in consecutive runs of at most MAX_STATEMENT_TEXT_CHARS characters (`chars` of each). */
export function statementRuns<T>(items: readonly T[], chars: (item: T) => number): T[][] {
  return consecutiveRuns(items, chars, statementTextChars);
}
