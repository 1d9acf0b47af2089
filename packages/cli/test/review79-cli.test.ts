/**
 * Review 79 (CLI): a value starting with `-V` is the program's version flag to commander's first
 * pass (`--reason "-Vendor outage"` printed the version and exited 0, nothing marked); the exact
 * payload read of show / list --json has no deadline of ferry's and fails untranslated (a silent
 * server: FERRY_UNEXPECTED "Query read timeout" after --statement-timeout + 2 s, where core's read
 * answers FERRY_TIMEOUT); the status read that explains a conflict of
 * `outbox retry`, failing after the retry committed, loses the batch's applied outcomes.
 */
import { halfOpenProxy } from '../../../test-support/halfOpenProxy';
import { useCliDatabase } from './cliDatabase';
import { insertEvent } from './rows';

jest.setTimeout(60_000);

const ferry = useCliDatabase();
const { cli, bare } = ferry;

async function eventState(id: string): Promise<{ status: string; lastError: string | null }> {
  const [row] = await ferry.test.db.query<{ status: string; last_error: string | null }>(
    'SELECT status, last_error FROM outbox_events WHERE id = $1::uuid',
    [id],
  );
  return { status: row!.status, lastError: row!.last_error };
}

describe('a value starting with -V (README: any other word starting with - is a value)', () => {
  it('outbox mark-failed --reason "-Vendor outage" marks the event with that reason, not prints the version', async () => {
    const id = await insertEvent(ferry.test.db);
    const run = await cli('outbox', 'mark-failed', id, '--reason', '-Vendor outage');
    expect({ code: run.code, lines: run.lines, ...(await eventState(id)) }).toEqual({
      code: 0,
      lines: [`${id} applied`],
      status: 'FAILED',
      lastError: '-Vendor outage',
    });
  });
});

/** A proxy to the test database that goes silent once a client sends a statement holding `marker`. */
async function silencedOn(marker: string) {
  const proxy = await halfOpenProxy(new URL(ferry.test.url));
  proxy.silenceOn(marker);
  return proxy;
}

describe("the exact payload read (exactJson.ts) is bounded and translated as core's reads are", () => {
  it.each([
    ['outbox show <id>', (id: string) => ['outbox', 'show', id]],
    ['outbox list --json', () => ['outbox', 'list', '--tenant', 'exactcut', '--json']],
  ])('%s: a server silent under it is FERRY_TIMEOUT', async (_what, argv) => {
    const id = await insertEvent(ferry.test.db, { tenant: 'exactcut' });
    const proxy = await silencedOn('WHERE id = ANY($1::uuid[])');
    try {
      const url = proxy.url(ferry.test.url);
      const run = await bare(...argv(id), '--statement-timeout', '1s', '--database-url', url);
      const answer = run.lines.concat(run.errors).join('\n');
      expect({ code: run.code, timeout: answer.includes('FERRY_TIMEOUT'), answer }).toEqual({
        code: 1,
        timeout: true,
        answer: expect.not.stringContaining('FERRY_UNEXPECTED'),
      });
    } finally {
      proxy.close();
    }
  });
});

describe('outbox retry: the status read explaining a conflict fails after the retry committed', () => {
  it('still names the event it retried (a failure part-way names what was applied before it)', async () => {
    const failed = await insertEvent(ferry.test.db, { status: 'FAILED' });
    const pending = await insertEvent(ferry.test.db);
    // core's OutboxAdmin.get, the read outboxConflictsExplained makes after retryMany committed.
    const proxy = await silencedOn('e.id = $2::uuid AND ($1::text IS NULL');
    try {
      const url = proxy.url(ferry.test.url);
      const run = await bare(
        'outbox',
        'retry',
        failed,
        pending,
        '--statement-timeout',
        '1s',
        '--database-url',
        url,
      );
      // The retry committed: the FAILED event is PENDING again; its get timed out.
      expect((await eventState(failed)).status).toBe('PENDING');
      expect(run.errors.join('\n')).toContain('FERRY_TIMEOUT');
      expect(run.lines.filter((line) => line.startsWith(failed))).toEqual([`${failed} applied`]);
    } finally {
      proxy.close();
    }
  });
});

/**
 * The class of the finding above: every read made after a change committed (the status read
 * explaining a conflict, for outbox retry and mark-failed alike) failing prints every outcome of
 * what committed, the conflict's without the status (saying it could not be read), then the
 * read's error; text and --json alike.
 */
describe('the conflict explanation read fails after the change committed: every outcome is printed', () => {
  const GET = 'e.id = $2::uuid AND ($1::text IS NULL';

  async function silencedRun(...argv: string[]) {
    const proxy = await silencedOn(GET);
    try {
      return await bare(...argv, '--statement-timeout', '1s', '--database-url', proxy.url(ferry.test.url));
    } finally {
      proxy.close();
    }
  }

  it('outbox mark-failed: the id marked before, and the conflict without its status', async () => {
    const pending = await insertEvent(ferry.test.db);
    const sent = await insertEvent(ferry.test.db, { status: 'SENT' });
    const run = await silencedRun('outbox', 'mark-failed', pending, sent, '--reason', 'r');
    expect({
      code: run.code,
      lines: run.lines,
      timeout: run.errors.join('\n').includes('FERRY_TIMEOUT'),
      marked: (await eventState(pending)).status,
    }).toEqual({
      code: 1,
      lines: [`${pending} applied`, `${sent} conflict: expected PENDING; the status now could not be read`],
      timeout: true,
      marked: 'FAILED',
    });
  });

  it('outbox retry --json: the results beside the error', async () => {
    const failed = await insertEvent(ferry.test.db, { status: 'FAILED' });
    const pending = await insertEvent(ferry.test.db);
    const run = await silencedRun('outbox', 'retry', failed, pending, '--json');
    const answer = JSON.parse(run.lines[0] ?? '{}') as {
      results?: Array<{ id: string; outcome: string; detail?: string }>;
      error?: { code: string };
    };
    expect({ code: run.code, results: answer.results, error: answer.error?.code }).toEqual({
      code: 1,
      results: [
        { id: failed, outcome: 'applied' },
        { id: pending, outcome: 'conflict', detail: 'expected FAILED; the status now could not be read' },
      ],
      error: 'FERRY_TIMEOUT',
    });
  });
});
