/**
 * Review 106: Inbox.verify(), initialize()'s checks starting nothing (what @ferry/nestjs runs at
 * module init, before any bootstrap hook starts a loop).
 */
import { Inbox } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let migrated: TestDatabase;
let bare: TestDatabase;
beforeAll(async () => {
  [migrated, bare] = await Promise.all([createTestDatabase(), createTestDatabase({ migrate: false })]);
});
afterAll(async () => {
  await Promise.all([migrated.drop(), bare.drop()]);
});

const options = { handlers: { 'review106.verify': async () => undefined }, worker: { enabled: true } };

describe('review106: Inbox.verify()', () => {
  it('rejects an unmigrated schema with FERRY_SCHEMA_NOT_READY, the enabled worker left idle', async () => {
    const inbox = new Inbox(bare.prisma, options);
    try {
      const failure = await inbox.verify().then(
        () => 'verified',
        (error: { code?: string }) => error.code,
      );
      expect({ failure, state: inbox.state }).toEqual({ failure: 'FERRY_SCHEMA_NOT_READY', state: 'idle' });
    } finally {
      await inbox.close();
    }
  });

  it('resolves on a migrated schema and starts nothing; FERRY_CLOSED once closed', async () => {
    const inbox = new Inbox(migrated.prisma, options);
    await inbox.verify();
    expect(inbox.state).toBe('idle');
    await inbox.close();
    await expect(inbox.verify()).rejects.toMatchObject({ code: 'FERRY_CLOSED' });
  });
});
