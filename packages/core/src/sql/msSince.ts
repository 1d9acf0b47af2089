/**
 * Milliseconds from the timestamp `column` to now(), as numeric: ±Infinity for a timestamp SQL set
 * to 'infinity' or '-infinity' (the table's CHECKs leave created_at free), where `now() - column`
 * fails (22008 "cannot subtract infinite timestamps"), and with it the statement for every row it
 * reads: a batch's completion, the outbox's and the inbox's stats
 * (test/review87-infiniteCreatedAt.test.ts, test/inbox/infiniteCreatedAt.test.ts).
 */
export function msSince(column: string): string {
  return `((extract(epoch FROM now()) - extract(epoch FROM ${column})) * 1000)`;
}
