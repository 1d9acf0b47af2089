/**
 * Review 115: the outbox relay on a database ferry has not migrated.
 *
 * Defect: the relay had no schema check of its own (the inbox has initialize() / verify()): on an
 * unmigrated database its loop reported the non-retriable FERRY_SCHEMA_NOT_READY at every back-off,
 * and an application had no relay call that refused to start. relay.verify() checks the outbox
 * table and the columns the relay uses (FERRY_SCHEMA_NOT_READY listing what is missing) and starts
 * nothing; FERRY_CLOSED once close() was called.
 */
import { createRelay, migrate } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let t: TestDatabase;
beforeEach(async () => {
  t = await createTestDatabase({ migrate: false });
});
afterEach(async () => {
  await t.drop();
});

it('verify() refuses an unmigrated outbox or a dropped column, passes once migrated, FERRY_CLOSED once closed', async () => {
  const relay = createRelay({ db: t.db, publisher: new InMemoryPublisher() });
  await expect(relay.verify()).rejects.toMatchObject({
    code: 'FERRY_SCHEMA_NOT_READY',
    missing: ['table:outbox_events'],
  });
  expect(relay.state).toBe('idle');
  await migrate(t.db);
  await expect(relay.verify()).resolves.toBeUndefined();
  await t.db.execute('ALTER TABLE outbox_events DROP COLUMN claim_token');
  await expect(relay.verify()).rejects.toMatchObject({ missing: ['column:outbox_events.claim_token'] });
  expect(relay.state).toBe('idle');
  await relay.close();
  await expect(relay.verify()).rejects.toMatchObject({ code: 'FERRY_CLOSED' });
});
