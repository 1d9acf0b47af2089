/**
 * Review 85: the admin lists read every listed record's payload (up to `maxPayloadBytes`, 16 MiB,
 * each; a row inserted by SQL may hold more), so a listing that shows or needs none (ferry's CLI
 * text listing, `retry --all`, `requeue --all`) cost memory growing with the payloads' size: a page
 * of large payloads aborted the CLI on a heap overflow (packages/cli/test/review85-listPayloadMemory).
 *
 * `list({ payload: false })` reads no payload: each item's `payload` is null, every other field as
 * `list()` answers it, and the cursor continues the same listing. A `payload` that is no boolean is
 * refused as every admin argument is.
 */
import {
  createOutboxAdmin,
  emit,
  InboxAdmin,
  InboxPrivilegedAdmin,
  isFerryError,
  type InboxRecord,
} from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

async function refusal(call: () => Promise<unknown>): Promise<unknown> {
  try {
    await call();
    return 'listed';
  } catch (error) {
    return isFerryError(error) ? { code: error.code, field: (error as { field?: string }).field } : error;
  }
}

const withoutPayload = <T extends { payload: unknown }>(record: T) => ({ ...record, payload: null });

it('outbox list({ payload: false }) answers every field but the payload, page by page', async () => {
  for (let n = 0; n < 3; n += 1) {
    await emit(t.db, { type: 'order.placed', tenantId: 'acme', payload: { n, blob: 'x'.repeat(1_000) } });
  }
  const admin = createOutboxAdmin(t.db);
  const full = await admin.list({ limit: 2 });
  const summary = await admin.list({ limit: 2, payload: false });
  expect(full.items.every((item) => item.payload !== null)).toBe(true);
  expect(summary.items).toEqual(full.items.map(withoutPayload));
  const next = await admin.list({ limit: 2, payload: false, cursor: summary.nextCursor ?? undefined });
  const fullNext = await admin.list({ limit: 2, cursor: full.nextCursor ?? undefined });
  expect(next.items).toEqual(fullNext.items.map(withoutPayload));
  expect(await admin.forTenant('acme').list({ payload: false })).toEqual({
    items: (await admin.forTenant('acme').list()).items.map(withoutPayload),
    nextCursor: null,
  });
  expect(await refusal(() => admin.list({ payload: 'no' } as never))).toEqual({
    code: 'FERRY_VALIDATION_FAILED',
    field: 'payload',
  });
});

it('inbox list({ payload: false }) answers every field but the payload, in a scope and across them', async () => {
  await t.db.execute(
    `INSERT INTO ferry_inbox_receipts (tenant_id, consumer, message_id, payload, payload_fingerprint,
       payload_bytes, headers, status, attempts, max_attempts, row_version, dead_at)
     SELECT 'acme', 'work', 'm-' || n, jsonb_build_object('n', n), 'fp', 8, '{}', 'DEAD', 5, 5, 6, now()
     FROM generate_series(1, 3) AS n`,
  );
  const scoped = new InboxAdmin(t.db).forTenant('acme');
  const full = await scoped.list({ status: 'DEAD' });
  expect(full.records).toHaveLength(3);
  expect(full.records.every((record) => record.payload !== null)).toBe(true);
  const summary = await scoped.list({ status: 'DEAD', payload: false });
  expect(summary.records).toEqual(full.records.map((r: InboxRecord) => withoutPayload(r)));
  const every = new InboxPrivilegedAdmin(t.db, { privilegedAdmin: true });
  expect((await every.list({ status: 'DEAD', payload: false })).records).toEqual(
    (await every.list({ status: 'DEAD' })).records.map((r: InboxRecord) => withoutPayload(r)),
  );
  expect(await refusal(() => scoped.list({ payload: 1 } as never))).toEqual({
    code: 'FERRY_VALIDATION_FAILED',
    field: 'payload',
  });
});
