import { randomUUID } from 'node:crypto';
import { emit } from '@ferry/core';
import { runCli } from '@ferry/cli';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { captureIo } from './io';

/**
 * Review finding (failed first): values the CLI prints in text mode (an event type, an audit
 * scope, an actor) reached the operator's terminal raw: a line break forged list lines, an escape
 * sequence drove the terminal. Every text line is escaped; one line per row stays one line.
 */
describe('ferry prints no control character in text mode', () => {
  let t: TestDatabase;

  async function cli(...argv: string[]) {
    const io = captureIo();
    const code = await runCli([...argv, '--database-url', t.url], io, { FERRY_ACTOR: 'ops@test' });
    return { code, ...io };
  }

  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it('outbox list prints one line per event, whatever the event type holds', async () => {
    const tenant = `t-${randomUUID()}`;
    await emit(t.db, {
      type: 'order.created\n00000000-0000-4000-8000-000000000000 SENT forged.type tenant=acme',
      tenantId: tenant,
      payload: {},
    });
    await emit(t.db, { type: 'order.paid\u001b[2J\u001b[H\u009b\u202e', tenantId: tenant, payload: {} });
    const list = await cli('outbox', 'list', '--tenant', tenant);
    expect(list.code).toBe(0);
    expect(list.lines).toHaveLength(2);
    expect(list.lines.join('')).not.toMatch(CONTROL);
    // Escaped, not dropped: the operator still sees what the type holds.
    expect(list.lines.join(' ')).toContain('order.paid\\u001b[2J');
  });

  it('--json output carries no raw DEL, C1, line separator or bidirectional control either', async () => {
    const tenant = `t-${randomUUID()}`;
    const type = 'order.paid\u007f\u009b2J\u2028\u202e';
    await emit(t.db, { type, tenantId: tenant, payload: { note: 'a\u0085b' } });
    const list = await cli('outbox', 'list', '--tenant', tenant, '--json');
    expect(list.code).toBe(0);
    expect(list.lines).toHaveLength(1);
    expect(list.lines[0]).not.toMatch(CONTROL);
    // Escaped as JSON escapes: the document reads back the same values.
    const page = JSON.parse(list.lines[0]!) as { items: Array<{ type: string }> };
    expect(page.items.map((item) => item.type)).toEqual([type]);
  });

  it('audit list prints one line per entry, whatever its scope, actor or ids hold', async () => {
    // Rows written before forTenant() refused such tenant ids, or by SQL: the CLI escapes them.
    const forged = 'tenant:acme\n9999 2026-01-01T00:00:00.000Z outbox.purge-sent applied-run outcome=applied';
    for (const [scope, actor, id] of [
      [forged, 'tenant-app', randomUUID()],
      ['tenant:acme\u001b]0;owned\u0007', 'ops\u001b[31m', 'x\ny'],
    ]) {
      await t.db.query(
        `INSERT INTO ferry_operator_audit (actor, action, scope, reason, ids, outcome, results, arguments, dry_run)
         VALUES ($1, 'outbox.retry', $2, NULL, ARRAY[$3]::text[], 'applied', '[]', '{}', false)`,
        [actor, scope, id],
      );
    }
    const list = await cli('audit', 'list', '--limit', '2');
    expect(list.code).toBe(0);
    expect(list.lines).toHaveLength(2);
    expect(list.lines.join('')).not.toMatch(CONTROL);
  });

  it('show, stats and error lines are escaped too', async () => {
    const tenant = `t-${randomUUID()}`;
    const { id } = await emit(t.db, { type: 'order.paid\u001b[2J', tenantId: tenant, payload: {} });
    const show = await cli('outbox', 'show', id, '--tenant', tenant);
    expect(show.code).toBe(0);
    expect(show.lines.join('')).not.toMatch(CONTROL);
    // A usage error echoes the value it refused.
    const refused = await cli('outbox', 'list', '--limit', '1\u001b[2J');
    expect(refused.code).toBe(2);
    expect(refused.errors.join('')).not.toMatch(CONTROL);
  });
});
