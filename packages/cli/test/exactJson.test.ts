/**
 * Review cli79, finding 5: a payload (or headers) holding a number a JavaScript number cannot
 * hold (1e400, beyond a double's range; 12345678901234567890123, beyond its precision), as a row
 * inserted by SQL may (jsonb keeps exact numerics), is shown with its exact digits by every
 * command that prints payloads or headers: `outbox show` / `inbox show` (text and --json) and
 * `outbox list --json` / `inbox list --json`. The driver's JSON.parse made the first null and
 * rounded the second.
 */
import { halfOpenProxy } from '../../../test-support/halfOpenProxy';
import { useCliDatabase } from './cliDatabase';
import { insertEvent, insertReceipt } from './rows';

jest.setTimeout(60_000);

const ferry = useCliDatabase();
const { cli, bare } = ferry;

const PAYLOAD = '{"big": 12345678901234567890123, "huge": 1e400, "note": "a"}';
const HEADERS = '{"n": 98765432109876543210987}';
/** jsonb writes 1e400 with its every digit. */
const HUGE = `1${'0'.repeat(400)}`;

function exactIn(text: string): { big: boolean; huge: boolean; header: boolean } {
  return {
    big: text.includes('12345678901234567890123'),
    huge: text.includes(HUGE),
    header: text.includes('98765432109876543210987'),
  };
}

const exact = { big: true, huge: true, header: true };

describe('outbox', () => {
  let id: string;
  beforeAll(async () => {
    id = await insertEvent(ferry.test.db, { tenant: 'exact', payload: PAYLOAD, headers: HEADERS });
  });

  it('show, text', async () => {
    const run = await cli('outbox', 'show', id);
    expect(run.code).toBe(0);
    const payload = run.lines.find((line) => line.startsWith('payload: '))!;
    const headers = run.lines.find((line) => line.startsWith('headers: '))!;
    expect(exactIn(`${payload}\n${headers}`)).toEqual(exact);
    expect(payload).not.toContain('null');
  });

  it('show --json: one JSON document holding the exact digits', async () => {
    const run = await cli('outbox', 'show', id, '--json');
    expect(run.code).toBe(0);
    expect(run.lines).toHaveLength(1);
    expect(exactIn(run.lines[0]!)).toEqual(exact);
    const { item } = JSON.parse(run.lines[0]!) as { item: { id: string; payload: { note: string } } };
    expect({ id: item.id, note: item.payload.note }).toEqual({ id, note: 'a' });
  });

  it('list --json', async () => {
    const run = await cli('outbox', 'list', '--tenant', 'exact', '--json');
    expect(run.code).toBe(0);
    expect(exactIn(run.lines[0]!)).toEqual(exact);
    const page = JSON.parse(run.lines[0]!) as { items: Array<{ id: string }>; nextCursor: string | null };
    expect({ ids: page.items.map((item) => item.id), nextCursor: page.nextCursor }).toEqual({
      ids: [id],
      nextCursor: null,
    });
  });
});

describe('inbox', () => {
  let id: string;
  beforeAll(async () => {
    ({ id } = await insertReceipt(ferry.test.db, { status: 'DEAD', payload: PAYLOAD, headers: HEADERS }));
  });

  it('show, text', async () => {
    const run = await cli('inbox', 'show', id, '--tenant', 'acme');
    expect(run.code).toBe(0);
    expect(exactIn(run.lines.join('\n'))).toEqual(exact);
  });

  it('show --json', async () => {
    const run = await cli('inbox', 'show', id, '--tenant', 'acme', '--json');
    expect(run.code).toBe(0);
    expect(exactIn(run.lines[0]!)).toEqual(exact);
    const { item } = JSON.parse(run.lines[0]!) as { item: { id: string; status: string } };
    expect(item).toMatchObject({ id, status: 'DEAD' });
  });

  it('list --json', async () => {
    const run = await cli('inbox', 'list', '--tenant', 'acme', '--status', 'dead', '--json');
    expect(run.code).toBe(0);
    expect(exactIn(run.lines[0]!)).toEqual(exact);
    expect((JSON.parse(run.lines[0]!) as { items: unknown[] }).items).toHaveLength(1);
  });

  it('a purged payload is shown as null', async () => {
    const purged = await insertReceipt(ferry.test.db, { payload: null });
    const run = await cli('inbox', 'show', purged.id, '--tenant', 'acme', '--json');
    expect((JSON.parse(run.lines[0]!) as { item: { payload: unknown } }).item.payload).toBeNull();
  });
});

/**
 * Review 79: the exact read is bounded and translated as core's own reads (withDeadlines,
 * withTranslation): a server silent under it is FERRY_TIMEOUT at --statement-timeout, a
 * connection dropped under it FERRY_DATABASE_UNAVAILABLE; neither is FERRY_UNEXPECTED with the
 * driver's words ("Query read timeout" after the pool's query_timeout, "Connection terminated").
 */
describe("the exact read fails as core's reads do", () => {
  const EXACT_READ = 'WHERE id = ANY($1::uuid[])';
  let event: string;
  let receipt: string;
  beforeAll(async () => {
    event = await insertEvent(ferry.test.db, { tenant: 'exactfail' });
    ({ id: receipt } = await insertReceipt(ferry.test.db));
  });

  const commands: Array<[string, () => string[]]> = [
    ['outbox show', () => ['outbox', 'show', event]],
    ['outbox list --json', () => ['outbox', 'list', '--tenant', 'exactfail', '--json']],
    ['inbox show', () => ['inbox', 'show', receipt, '--tenant', 'acme']],
    ['inbox list --json', () => ['inbox', 'list', '--tenant', 'acme', '--json']],
  ];
  const cases = commands.flatMap(([name, argv]) => [
    [name, 'silent', 'FERRY_TIMEOUT', argv] as const,
    [name, 'dropped', 'FERRY_DATABASE_UNAVAILABLE', argv] as const,
  ]);

  it.each(cases)('%s, the connection %s under it: %s', async (_name, fault, code, argv) => {
    const proxy = await halfOpenProxy(new URL(ferry.test.url));
    if (fault === 'silent') proxy.silenceOn(EXACT_READ);
    else proxy.dropOn(EXACT_READ);
    try {
      const url = proxy.url(ferry.test.url);
      const run = await bare(...argv(), '--statement-timeout', '1s', '--database-url', url);
      const answer = run.lines.concat(run.errors).join('\n');
      expect({ code: run.code, named: answer.includes(code), answer }).toEqual({
        code: 1,
        named: true,
        answer: expect.not.stringContaining('FERRY_UNEXPECTED'),
      });
    } finally {
      proxy.close();
    }
  });
});
