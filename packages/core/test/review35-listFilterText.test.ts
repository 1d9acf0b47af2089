/**
 * Review 35: the text filters of the admin lists (outbox list `type` / `key`, audit log `actor`,
 * `action`, `scope`, `tenantId`, `id`) are checked only as strings (stringArgument), not as text
 * PostgreSQL can hold (assertText: no NUL, no unpaired surrogate), unlike every other text
 * argument of the admins (reason, actor, forTenant).
 *
 * - An unpaired surrogate is not refused: the driver sends it as U+FFFD, so the filter silently
 *   matches another value: list({ key: 'k\ud800' }) answers the events of key 'k\ufffd', a key
 *   emit() takes. A silent wrong result: an operator script filtering by a key read from a
 *   corrupted source acts on another key's events.
 * - A NUL reaches PostgreSQL, whose 22021 comes back as FERRY_VALIDATION_FAILED without a
 *   `field`, carrying PostgreSQL's message ("outbox list failed: invalid byte sequence for
 *   encoding UTF8: 0x00").
 *
 * Contract: docs/outbox.md Admin: "Every argument's value is checked the same way before anything
 * runs, and refused showing the value received ... never coerced: ... filters and cursors strings";
 * forTenant, reason and actor are refused with rule invalid_text for the same characters
 * (test/validation/adminHostile.test.ts).
 *
 * Fix direction: textFault/assertText on every text filter (outbox list, audit log) before SQL,
 * FERRY_VALIDATION_FAILED naming the filter.
 */
import { createAuditLog, createOutboxAdmin, emit, isFerryError } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

async function outcome(call: () => Promise<{ items: Array<{ id: string }> }>): Promise<unknown> {
  try {
    return { ids: (await call()).items.map((item) => item.id) };
  } catch (error) {
    return isFerryError(error)
      ? { code: error.code, field: (error as { field?: string }).field, message: error.message }
      : { error: String(error) };
  }
}

it('an outbox list filter holding an unpaired surrogate is refused, not matched as U+FFFD', async () => {
  const { id } = await emit(t.db, { type: 'order.\ufffd', payload: {}, orderingKey: 'k\ufffd' });
  const admin = createOutboxAdmin(t.db);
  expect(await admin.get(id)).toMatchObject({ orderingKey: 'k\ufffd' });
  // On HEAD: { ids: [id] } for both: another key's, another type's events.
  expect({
    key: await outcome(() => admin.list({ key: 'k\ud800' })),
    type: await outcome(() => admin.list({ type: 'order.\udc00' })),
  }).toMatchObject({
    key: { code: 'FERRY_VALIDATION_FAILED', field: 'key' },
    type: { code: 'FERRY_VALIDATION_FAILED', field: 'type' },
  });
});

it('a NUL in an outbox list or audit log filter is refused naming the filter, before any SQL', async () => {
  const admin = createOutboxAdmin(t.db);
  const audit = createAuditLog(t.db);
  // On HEAD: { code: FERRY_VALIDATION_FAILED, field: undefined, message: "… invalid byte sequence for encoding \"UTF8\": 0x00" }.
  expect({
    type: await outcome(() => admin.list({ type: 'a\u0000b' })),
    key: await outcome(() => admin.list({ key: 'a\u0000b' })),
    actor: await outcome(() => audit.list({ actor: 'a\u0000b' })),
    tenantId: await outcome(() => audit.list({ tenantId: 'a\u0000b' })),
  }).toMatchObject({
    type: { code: 'FERRY_VALIDATION_FAILED', field: 'type' },
    key: { code: 'FERRY_VALIDATION_FAILED', field: 'key' },
    actor: { code: 'FERRY_VALIDATION_FAILED', field: 'actor' },
    tenantId: { code: 'FERRY_VALIDATION_FAILED', field: 'tenantId' },
  });
});
