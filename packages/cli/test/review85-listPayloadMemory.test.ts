/**
 * Review 85 (failed first): `ferry outbox list` and `ferry inbox list` print one summary line per
 * record, no payload, yet read (and JSON-parsed) every listed record's payload: a page of FAILED
 * events or DEAD receipts with large payloads (up to `maxPayloadBytes`, 16 MiB, or anything a row
 * inserted by SQL holds) cost the CLI the page's payloads several times over in memory. With a
 * heap smaller than the page's payloads, the command died of a V8 heap overflow (SIGABRT, exit
 * 134, no FERRY_* answer) instead of printing its lines: an on-call engineer's listing killed by
 * the very backlog it was meant to show.
 *
 * Expected: the text listings read no payload (only `--json`, `show` print one), so their memory
 * does not grow with the payloads' size; the lines are printed and the command exits 0.
 */
import { useCliDatabase } from './cliDatabase';
import { runBinary } from './binary';

const ROWS = 60;
/** Characters of each payload's blob: 60 x 2 MB, far beyond the child's heap. */
const BLOB = 2_000_000;
/** The child's V8 heap (old space, MB): ample for the CLI, a fraction of the page's payloads. */
const HEAP_MB = 48;
const RUN_DEADLINE_MS = 60_000;

const d = useCliDatabase();

async function listed(argv: string[]): Promise<{ code: number | null; lines: string[]; stderr: string[] }> {
  const run = runBinary([...argv, '--database-url', d.test.url], [`--max-old-space-size=${HEAP_MB}`]);
  const ended = await run.ended(RUN_DEADLINE_MS);
  expect(ended.hung).toBe(false);
  return { code: ended.code, lines: run.stdout(), stderr: run.stderr() };
}

it('outbox list prints a page of events with large payloads without reading them', async () => {
  await d.test.db.execute(
    `INSERT INTO outbox_events (id, event_type, payload, tenant_id, max_retries, status, failed_at, last_error)
     SELECT gen_random_uuid(), 'order.big', jsonb_build_object('blob', repeat('x', ${BLOB})), 'acme', 5,
       'FAILED', now(), 'broker refused'
     FROM generate_series(1, ${ROWS})`,
  );
  const run = await listed(['outbox', 'list', '--status', 'failed', '--limit', String(ROWS)]);
  expect(run.stderr.filter((line) => /heap|FATAL/i.test(line))).toEqual([]);
  expect(run.code).toBe(0);
  expect(run.lines).toHaveLength(ROWS);
  expect(run.lines.every((line) => / FAILED order\.big /.test(line))).toBe(true);
});

it('inbox list prints a page of receipts with large payloads without reading them', async () => {
  await d.test.db.execute(
    `INSERT INTO ferry_inbox_receipts (tenant_id, consumer, message_id, payload, payload_fingerprint,
       payload_bytes, headers, status, attempts, max_attempts, row_version, dead_at, last_error)
     SELECT 'acme', 'work', gen_random_uuid()::text, jsonb_build_object('blob', repeat('x', ${BLOB})),
       'fp', ${BLOB}, '{}', 'DEAD', 5, 5, 6, now(), 'handler threw'
     FROM generate_series(1, ${ROWS})`,
  );
  const run = await listed([
    'inbox',
    'list',
    '--status',
    'dead',
    '--tenant',
    'acme',
    '--limit',
    String(ROWS),
  ]);
  expect(run.stderr.filter((line) => /heap|FATAL/i.test(line))).toEqual([]);
  expect(run.code).toBe(0);
  expect(run.lines).toHaveLength(ROWS);
  expect(run.lines.every((line) => / DEAD version=6 consumer=work /.test(line))).toBe(true);
});
