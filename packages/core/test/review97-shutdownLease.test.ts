import { createRelay, emit, type Publisher } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { silent, statusOf, waitFor } from './outbox/helpers';

/**
 * A relay closed while a publish outlasts shutdownTimeout gives the publish up in order: that is
 * no crash, so its claim is no strike for the poison guard (which counts leases that expired
 * because their relay died). Hung shutdowns in a row (a broker slower than shutdownTimeout over a
 * few deploys) failed a healthy event with "poison guard: the lease expired N times in a row".
 */
let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** A publisher whose publish() never settles, whatever its signal says; counts its calls. */
function hungPublisher(): Publisher & { calls: number } {
  const publisher = {
    calls: 0,
    publish: () => {
      publisher.calls += 1;
      return new Promise<never>(() => undefined);
    },
  };
  return publisher;
}

const OPTIONS = {
  pollInterval: 20,
  shutdownTimeout: 50,
  lease: { duration: 1_000, heartbeatInterval: 200 },
  poisonGuard: { maxClaims: 3 },
};

describe('a relay closed past shutdownTimeout', () => {
  it('counts no poison-guard strike for the claim it gave up: three hung shutdowns in a row leave the event to be sent', async () => {
    const { id } = await emit(t.db, { type: 'test.event', payload: { n: 1 } });
    const observed: string[] = [];
    for (let round = 0; round < 3; round += 1) {
      const publisher = hungPublisher();
      const relay = createRelay({
        db: t.db,
        publisher,
        options: OPTIONS,
        logger: silent,
        observer: (e) => void (e.type === 'failed' && observed.push(e.reason)),
      });
      relay.start();
      await waitFor(() => publisher.calls > 0);
      await relay.close();
      // Given up, not dropped: held from other relays until the lease would have ended.
      const row = await statusOf(t.db, id);
      expect(row).toMatchObject({ status: 'PENDING', claim_token: null });
      expect(row.gap_ms).toBeGreaterThan(0);
    }
    const healthy = new InMemoryPublisher();
    const relay = createRelay({
      db: t.db,
      publisher: healthy,
      options: OPTIONS,
      logger: silent,
      observer: (e) => void (e.type === 'failed' && observed.push(e.reason)),
    });
    relay.start();
    try {
      await waitFor(async () => ['SENT', 'FAILED'].includes(String((await statusOf(t.db, id)).status)));
    } finally {
      await relay.close();
    }
    expect(observed).toEqual([]);
    expect(await statusOf(t.db, id)).toMatchObject({ status: 'SENT', retry_count: 0, last_error: null });
    expect(healthy.delivered.map((m) => m.id)).toEqual([id]);
  });
});
