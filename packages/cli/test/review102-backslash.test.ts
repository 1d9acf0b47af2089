/**
 * Review 102 (failed first): text output writes a control character as `\uXXXX` but leaves a
 * backslash as it is, so an event type holding the six characters `\u001b` printed exactly as
 * one holding an ESC byte: the operator could not tell them apart. Expected: a value a text line
 * would have to escape (a control, a backslash, a leading quote, `-` where `-` means none) is
 * written as a JSON string, as the line's other free-text fields (error, actor, reason) are; a
 * plain value stays bare. Under --json both read back as they are stored.
 */
import { randomUUID } from 'node:crypto';
import { emit } from '@ferry/core';
import { useCliDatabase } from './cliDatabase';

const d = useCliDatabase();

const ESC = 'order.paid\u001b[2J';
const LITERAL = 'order.paid\\u001b[2J';

it('outbox list: an ESC byte and a literal backslash-u read differently, plain types stay bare', async () => {
  const tenant = `t-${randomUUID()}`;
  const escaped = await emit(d.test.db, { type: ESC, tenantId: tenant, payload: {} });
  const literal = await emit(d.test.db, { type: LITERAL, tenantId: tenant, payload: {} });
  const plain = await emit(d.test.db, { type: 'order.paid', tenantId: tenant, payload: {} });
  const run = await d.cli('outbox', 'list', '--tenant', tenant);
  expect(run.code).toBe(0);
  const typeOf = (id: string): string => run.lines.find((line) => line.startsWith(id))!.split(' ')[2]!;
  expect(typeOf(escaped.id)).toBe('"order.paid\\u001b[2J"');
  expect(typeOf(literal.id)).toBe('"order.paid\\\\u001b[2J"');
  expect(typeOf(plain.id)).toBe('order.paid');
  const json = await d.cli('outbox', 'list', '--tenant', tenant, '--json');
  const types = (JSON.parse(json.lines[0]!) as { items: Array<{ type: string }> }).items.map((i) => i.type);
  expect(types.sort()).toEqual([ESC, LITERAL, 'order.paid'].sort());
});

it('inbox list: the same for a message id', async () => {
  const tenant = `t-${randomUUID()}`;
  for (const messageId of ['m\u001bx', 'm\\u001bx']) {
    await d.test.db.query(
      `INSERT INTO ferry_inbox_receipts (tenant_id, consumer, message_id, payload, payload_fingerprint,
         payload_bytes, headers, status, attempts, max_attempts, row_version, dead_at, last_error)
       VALUES ($1, 'work', $2, '{}', 'fp', 2, '{}', 'DEAD', 5, 5, 6, now(), 'broken')`,
      [tenant, messageId],
    );
  }
  const run = await d.cli('inbox', 'list', '--tenant', tenant);
  expect(run.code).toBe(0);
  const messages = run.lines.map((line) => / message=(\S+) /.exec(line)![1]).sort();
  expect(messages).toEqual(['"m\\\\u001bx"', '"m\\u001bx"'].sort());
});
