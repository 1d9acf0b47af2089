import { dateMs } from './dateColumn';

/**
 * Milliseconds from the timestamp `column` to now(), as float8: from the time the record's Date
 * holds (dateMs: a time beyond a Date's range, 'infinity' and '-infinity' included, is the nearest
 * end of the range), so an age is always a finite number, `now - createdAt` of the record read.
 * `now() - column` failed (22008 "cannot subtract infinite timestamps") for an infinite one, and
 * with it the statement for every row it reads: a batch's completion, the outbox's and the inbox's
 * stats (test/review87-infiniteCreatedAt.test.ts, test/inbox/infiniteCreatedAt.test.ts); an age of
 * ±Infinity was then written null by JSON, which says nothing is pending (`ferry outbox stats
 * --json`, packages/cli/test/review88-time.test.ts).
 */
export function msSince(column: string): string {
  return `(extract(epoch FROM now()) * 1000 - ${dateMs(column)})`;
}
