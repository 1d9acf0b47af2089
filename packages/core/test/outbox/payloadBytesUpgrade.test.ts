/**
 * An outbox upgraded to migration 0012 (payload_bytes): the column is required, the migration adds
 * it to a table holding events stored before it, and those events are claimed within
 * maxBatchBytes by their stored size.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { checkSchema, migrate } from '@ferry/core';
import { relayStore } from '@ferry/core/internal/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await t.db.execute('ALTER TABLE outbox_events DROP COLUMN payload_bytes');
  await t.db.execute("DELETE FROM ferry_schema_migrations WHERE name = '0012_outbox_payload_bytes'");
});
afterAll(async () => {
  await t.drop();
});

const MiB = 1024 * 1024;

it('a table without payload_bytes is not ready; 0012 adds it, and older events are claimed by their stored size', async () => {
  await expect(checkSchema(t.db)).rejects.toMatchObject({
    code: 'FERRY_SCHEMA_NOT_READY',
    details: { missing: ['column:outbox_events.payload_bytes', 'migration:0012_outbox_payload_bytes'] },
  });
  // Three events of 1.5 MiB (random base64: stored about as large as their text), as emit wrote
  // them before 0012.
  const ids = [randomUUID(), randomUUID(), randomUUID()];
  for (const [n, id] of ids.entries()) {
    await t.db.execute(
      `INSERT INTO outbox_events (id, event_type, payload, max_retries) VALUES ($1::uuid, 'old', $2::jsonb, 5)`,
      [id, JSON.stringify({ n, blob: randomBytes(MiB + MiB / 8).toString('base64') })],
    );
  }
  expect((await migrate(t.db)).applied).toEqual(['0012_outbox_payload_bytes']);
  await expect(checkSchema(t.db)).resolves.toBeDefined();
  const claim = await relayStore(t.db).claim({
    token: '00000000-0000-4000-8000-0000000000c1',
    limit: 500,
    maxBytes: 4 * MiB,
    leaseMs: 60_000,
    failedHead: 'block',
  });
  expect(claim.rows.map((r) => r.id)).toEqual(ids.slice(0, 2));
});
