/**
 * Review 119: verifyOutboxSchema, the check of the outbox table an application that only emits
 * runs at start (relay.verify()'s, without a relay): what is missing is named, nothing migrates.
 */
import { FerryConfigError, verifyOutboxSchema } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let bare: TestDatabase;
let migrated: TestDatabase;
beforeAll(async () => {
  [bare, migrated] = await Promise.all([createTestDatabase({ migrate: false }), createTestDatabase()]);
});
afterAll(async () => {
  await Promise.all([bare.drop(), migrated.drop()]);
});

it('an unmigrated database: FERRY_SCHEMA_NOT_READY naming the outbox table, nothing created', async () => {
  await expect(verifyOutboxSchema(bare.db)).rejects.toMatchObject({
    code: 'FERRY_SCHEMA_NOT_READY',
    missing: ['table:outbox_events'],
  });
  const [row] = await bare.db.query<{ t: string | null }>("SELECT to_regclass('outbox_events')::text AS t");
  expect(row?.t).toBeNull();
});

it('a column the relay uses dropped: named', async () => {
  await migrated.db.execute('ALTER TABLE outbox_events RENAME COLUMN claim_token TO claim_token_old');
  try {
    await expect(verifyOutboxSchema(migrated.db, { statementTimeoutMs: 5_000 })).rejects.toMatchObject({
      code: 'FERRY_SCHEMA_NOT_READY',
      missing: ['column:outbox_events.claim_token'],
    });
  } finally {
    await migrated.db.execute('ALTER TABLE outbox_events RENAME COLUMN claim_token_old TO claim_token');
  }
  await expect(verifyOutboxSchema(migrated.db)).resolves.toBeUndefined();
});

it.each([
  ['null options', null],
  ['an unknown key', { statementTimeout: 5_000 }],
  ['a statementTimeoutMs out of bounds', { statementTimeoutMs: 1 }],
])('%s: FerryConfigError', async (_name, options) => {
  await expect(
    verifyOutboxSchema(migrated.db, options as unknown as { statementTimeoutMs?: number }),
  ).rejects.toBeInstanceOf(FerryConfigError);
});
