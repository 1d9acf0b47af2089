/**
 * Review 103: a text listing line is bare words and JSON strings separated by spaces (the error,
 * actor and reason fields are JSON strings; review 102 writes a stored value as one when it needs
 * an escape: word()). A stored value holding a space (an event type `order placed`, a tenant
 * `acme corp`, a message id `a b`, all accepted by emit and acceptance) was left bare, so it read
 * as two fields, and a value could forge one (`x tenant=other`). Expected: such a value is a JSON
 * string, so every line splits into the same fields; --json reads back the value as stored.
 */
import { randomUUID } from 'node:crypto';
import { emit } from '@ferry/core';
import { useCliDatabase } from './cliDatabase';

const d = useCliDatabase();

/** A line's fields: bare words, JSON strings, and `name=` followed by either. */
function fields(line: string): string[] {
  return line.match(/(?:[^\s"=]+=)?(?:"(?:[^"\\]|\\.)*"|\S+)/g) ?? [];
}

it('outbox list: a type, tenant or key holding a space or a comma is one field', async () => {
  const tenant = `t ${randomUUID()}`;
  const type = 'order placed tenant=other';
  const key = 'k\u00a01,2';
  const event = await emit(d.test.db, { type, tenantId: tenant, orderingKey: key, payload: {} });
  const run = await d.cli('outbox', 'list', '--tenant', tenant);
  expect(run.code).toBe(0);
  const line = run.lines.find((l) => l.startsWith(event.id))!;
  const [, , typeField, tenantField, keyField] = fields(line);
  expect([typeField, tenantField, keyField]).toEqual([
    JSON.stringify(type),
    `tenant=${JSON.stringify(tenant)}`,
    `key=${JSON.stringify(key)}`,
  ]);
  expect(fields(line).filter((f) => f.startsWith('tenant='))).toHaveLength(1);
});

it('inbox list: a consumer and message id holding a space are one field each', async () => {
  const tenant = `t-${randomUUID()}`;
  await d.test.db.query(
    `INSERT INTO ferry_inbox_receipts (tenant_id, consumer, message_id, payload, payload_fingerprint,
       payload_bytes, headers, status, attempts, max_attempts, row_version, dead_at, last_error)
     VALUES ($1, 'the work', 'm 1 tenant=other', '{}', 'fp', 2, '{}', 'DEAD', 5, 5, 6, now(), 'broken')`,
    [tenant],
  );
  const run = await d.cli('inbox', 'list', '--tenant', tenant);
  expect(run.code).toBe(0);
  const all = fields(run.lines[0]!);
  expect(all.filter((f) => /^(consumer|message|tenant)=/.test(f))).toEqual([
    'consumer="the work"',
    'message="m 1 tenant=other"',
    `tenant=${tenant}`,
  ]);
});
