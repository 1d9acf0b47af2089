// Review finding (failed first): liveness read a healthy, idle relay and inbox worker as down
// whenever their poll interval was longer than maxCycleAgeMs: an idle loop finishes a cycle once
// per poll interval, so a liveness probe restarted a working process. The bound now counts from
// when the next cycle was due: maxCycleAgeMs past the loop's poll interval.
import { createHealth, createRelay, Inbox } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { waitFor } from '../outbox/helpers';

const silent = pino({ level: 'silent' });
const LONG_POLL_MS = 600_000;
const MAX_CYCLE_AGE_MS = 50;
let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const ageOf = (at: Date | null): number => (at === null ? -1 : Date.now() - at.getTime());

describe('liveness of an idle loop whose poll interval is longer than maxCycleAgeMs', () => {
  it('an idle relay and inbox worker polling on schedule are up', async () => {
    const relay = createRelay({
      db: t.db,
      publisher: new InMemoryPublisher(),
      logger: silent,
      options: { pollInterval: LONG_POLL_MS },
    });
    const inbox = new Inbox(t.prisma, {
      logger: silent,
      handlers: { work: async () => {} },
      worker: { pollIntervalMs: LONG_POLL_MS },
    });
    relay.start();
    inbox.start();
    try {
      // Both finished their first cycle and now wait out their poll interval, for longer than the bound.
      await waitFor(
        () => ageOf(relay.lastCycleAt) > MAX_CYCLE_AGE_MS && ageOf(inbox.lastCycleAt) > MAX_CYCLE_AGE_MS,
      );
      const health = createHealth({ db: t.db, relay, inbox, maxCycleAgeMs: MAX_CYCLE_AGE_MS });
      expect(await health.liveness()).toMatchObject({
        status: 'up',
        checks: [
          { name: 'relay', status: 'up' },
          { name: 'inbox worker', status: 'up' },
        ],
      });
    } finally {
      await relay.close();
      await inbox.close();
    }
  });

  it('a loop with no cycle within maxCycleAgeMs past its poll interval is down, the bound shown', async () => {
    const stalled = { lastCycleAt: new Date(Date.now() - 120_000), state: 'running', pollIntervalMs: 1_000 };
    const report = await createHealth({ db: t.db, relay: stalled, maxCycleAgeMs: 60_000 }).liveness();
    expect(report.status).toBe('down');
    expect(report.checks[0]!.detail).toMatch(
      /^last cycle \d+ ms ago \(bound 60000 past the 1000 ms poll interval\)$/,
    );
  });
});
