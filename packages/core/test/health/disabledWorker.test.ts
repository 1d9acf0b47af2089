// Failed first: an acceptance-only Inbox (worker.enabled false, the default, never started) passed
// to createHealth as the README shows went down once maxCycleAgeMs past its poll interval had
// passed ("no cycle in …"), so a liveness probe restarted a process whose worker is switched off
// by configuration, in a loop. Such an inbox is left out of liveness, as a disabled relay is (and
// @ferry/nestjs's InboxService with its worker off); an enabled worker never started still is down.
import { createHealth, Inbox } from '@ferry/core';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { waitFor } from '../outbox/helpers';

const silent = pino({ level: 'silent' });
/** The smallest bounds, so the inbox's grace (poll interval + maxCycleAgeMs) passes at once. */
const POLL_MS = 1;
const MAX_CYCLE_AGE_MS = 1;
let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** Liveness once the inbox's grace has surely passed since the health was created. */
async function livenessAfterGrace(inbox: Inbox) {
  const health = createHealth({ db: t.db, inbox, maxCycleAgeMs: MAX_CYCLE_AGE_MS });
  const createdAt = Date.now();
  await waitFor(() => Date.now() - createdAt > 20 * (POLL_MS + MAX_CYCLE_AGE_MS));
  return health.liveness();
}

describe('liveness of an inbox whose worker is switched off by configuration', () => {
  it('an acceptance-only inbox (worker.enabled false, never started) is left out of liveness', async () => {
    const inbox = new Inbox(t.prisma, {
      logger: silent,
      handlers: { work: async () => {} },
      worker: { enabled: false, pollIntervalMs: POLL_MS },
    });
    try {
      await inbox.initialize();
      expect(await livenessAfterGrace(inbox)).toEqual({ status: 'up', checks: [] });
    } finally {
      await inbox.close();
    }
  });

  it('an enabled worker that was never started is still down', async () => {
    const inbox = new Inbox(t.prisma, {
      logger: silent,
      handlers: { work: async () => {} },
      worker: { enabled: true, pollIntervalMs: POLL_MS },
    });
    try {
      expect(await livenessAfterGrace(inbox)).toMatchObject({
        status: 'down',
        checks: [{ name: 'inbox worker', status: 'down' }],
      });
    } finally {
      await inbox.close();
    }
  });

  it('a disabled worker started by hand is checked, and down once closed', async () => {
    const inbox = new Inbox(t.prisma, {
      logger: silent,
      handlers: { work: async () => {} },
      worker: { enabled: false, pollIntervalMs: 1_000 },
    });
    inbox.start();
    await waitFor(() => inbox.lastCycleAt !== null);
    const health = createHealth({ db: t.db, inbox, maxCycleAgeMs: 60_000 });
    expect(await health.liveness()).toMatchObject({
      status: 'up',
      checks: [{ name: 'inbox worker', status: 'up' }],
    });
    await inbox.close();
    expect(await health.liveness()).toMatchObject({
      status: 'down',
      checks: [{ name: 'inbox worker', status: 'down', detail: 'state closed' }],
    });
  });
});
