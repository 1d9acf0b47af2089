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
 * `items` in consecutive runs of at most MAX_STATEMENT_TEXT_CHARS characters (`chars` of each
 * item), one item at least each, in order: one run for a batch within the bound.
 */
export function statementRuns<T>(items: readonly T[], chars: (item: T) => number): T[][] {
  const runs: T[][] = [];
  let run: T[] = [];
  let total = 0;
  for (const item of items) {
    const size = chars(item);
    if (run.length > 0 && total + size > MAX_STATEMENT_TEXT_CHARS) {
      runs.push(run);
      run = [];
      total = 0;
    }
    run.push(item);
    total += size;
  }
  if (run.length > 0) runs.push(run);
  return runs;
}
