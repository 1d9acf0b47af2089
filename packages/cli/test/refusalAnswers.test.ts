/**
 * Review cli79, findings 1 and 6: a change refused because the record is not as the operator
 * expected says so in text as well as under --json, for every command that can be refused so
 * (inbox requeue and replay, outbox retry and mark-failed): what it expected (a status, the
 * observed version) and what it found. A replay refused because its source's payload was purged
 * gets a hint of its own: listing it again and acting on its version, the conflict hint, cannot help.
 */
import { useCliDatabase } from './cliDatabase';
import { insertEvent, insertReceipt } from './rows';

jest.setTimeout(60_000);

const ferry = useCliDatabase();
const { cli } = ferry;

/** The conflict hint, for any other refusal: "the record moved on ...". */
const CONFLICT_HINT = 'hint: the record moved on';

describe('inbox requeue: a conflict line says what was expected and found', () => {
  it.each([
    ['a stale version', 'DEAD', 4, 'expected DEAD at version 3, found DEAD at version 4'],
    ['a receipt no longer DEAD', 'COMPLETED', 3, 'expected DEAD at version 3, found COMPLETED at version 3'],
  ] as const)('%s', async (_what, status, version, detail) => {
    const receipt = await insertReceipt(ferry.test.db, { status, version });
    const argv = ['inbox', 'requeue', `${receipt.id}:3`, '--tenant', 'acme', '--reason', 'fixed'];
    const text = await cli(...argv);
    expect({ code: text.code, lines: text.lines }).toEqual({
      code: 1,
      lines: [`${receipt.id} conflict: ${detail}`],
    });
    const json = await cli(...argv, '--json');
    expect(JSON.parse(json.lines[0]!)).toMatchObject({
      results: [{ id: receipt.id, outcome: 'conflict', detail }],
    });
  });

  it('a dry run names it too', async () => {
    const receipt = await insertReceipt(ferry.test.db, { status: 'DEAD', version: 5 });
    const run = await cli(
      'inbox',
      'requeue',
      `${receipt.id}:3`,
      '--tenant',
      'acme',
      '--reason',
      'r',
      '--dry-run',
    );
    expect(run.lines).toEqual([
      `${receipt.id} conflict (dry run): expected DEAD at version 3, found DEAD at version 5`,
    ]);
  });
});

describe('outbox retry and mark-failed: a conflict line names the status found', () => {
  it('retry of a PENDING event (one of two)', async () => {
    const failed = await insertEvent(ferry.test.db, { status: 'FAILED' });
    const pending = await insertEvent(ferry.test.db);
    const run = await cli('outbox', 'retry', failed, pending);
    expect({ code: run.code, lines: run.lines }).toEqual({
      code: 1,
      lines: [`${failed} applied`, `${pending} conflict: expected FAILED, found PENDING`],
    });
    const json = await cli('outbox', 'retry', pending, '--json');
    expect(JSON.parse(json.lines[0]!)).toMatchObject({
      results: [{ id: pending, outcome: 'conflict', detail: 'expected FAILED, found PENDING' }],
    });
  });

  it('mark-failed of a SENT event', async () => {
    const sent = await insertEvent(ferry.test.db, { status: 'SENT' });
    const run = await cli('outbox', 'mark-failed', sent, '--reason', 'poison');
    expect({ code: run.code, lines: run.lines }).toEqual({
      code: 1,
      lines: [`${sent} conflict: expected PENDING, found SENT`],
    });
  });
});

describe('inbox replay: a refusal says what was expected and found', () => {
  const replay = (id: string, version: number, ...more: string[]) =>
    cli(
      'inbox',
      'replay',
      id,
      '--expected-version',
      String(version),
      '--target-consumer',
      'rebuild',
      '--tenant',
      'acme',
      '--reason',
      'rebuild',
      ...more,
    );

  it.each([
    [
      'a stale --expected-version',
      'COMPLETED',
      'expected COMPLETED at version 1, found COMPLETED at version 2',
    ],
    ['a receipt that is not COMPLETED', 'DEAD', 'expected COMPLETED at version 1, found DEAD at version 2'],
  ] as const)('%s', async (_what, status, detail) => {
    const source = await insertReceipt(ferry.test.db, { status, version: 2 });
    const text = await replay(source.id, 1);
    expect(text.code).toBe(1);
    expect(text.errors[0]).toBe(
      `ferry inbox replay: FERRY_STATE_CONFLICT: inbox record ${source.id}: ${detail}`,
    );
    expect(text.errors).toContainEqual(expect.stringContaining(CONFLICT_HINT));
    const json = await replay(source.id, 1, '--json');
    expect(JSON.parse(json.lines[0]!)).toMatchObject({
      error: { code: 'FERRY_STATE_CONFLICT', message: `inbox record ${source.id}: ${detail}` },
    });
  });

  it('a purged payload: says so, with a hint of its own (text and --json)', async () => {
    const source = await insertReceipt(ferry.test.db, { status: 'COMPLETED', version: 2, payload: null });
    const text = await replay(source.id, 2);
    expect(text.code).toBe(1);
    expect(text.errors[0]).toContain('payload was purged');
    const hint = text.errors.find((line) => line.startsWith('hint: '));
    expect(hint).toContain('purge');
    expect(hint).not.toContain(CONFLICT_HINT.slice('hint: '.length));
    const json = await replay(source.id, 2, '--json');
    const { error } = JSON.parse(json.lines[0]!) as { error: { code: string; hint: string } };
    expect({ code: error.code, hint: `hint: ${error.hint}` }).toEqual({ code: 'FERRY_STATE_CONFLICT', hint });
  });
});
