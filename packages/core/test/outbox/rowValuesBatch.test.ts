/**
 * A row whose counters were written by SQL (an operator, an older version) at values emit and
 * the relay never write must not fail the set-based statement it is claimed, completed,
 * recovered or released with: it is handled alone (clamped, or FAILED), its neighbours go on.
 * The CHECK retry_count <= max_retries and integer range are the two limits a row can meet.
 * (review82-spentRowBatch.test.ts: the completion of a spent row with a healthy neighbour.)
 */
import { randomUUID } from 'node:crypto';
import { createOutboxAdmin, emit } from '@ferry/core';
import { relayStore } from '@ferry/core/internal/testing';
import { InMemoryPublisher, type PublishDecision } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { expireLeases, relay } from './helpers';

const INT_MAX = 2_147_483_647;

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});
beforeEach(async () => {
  await t.db.execute('DELETE FROM outbox_events');
});

/** Emits an odd event (its columns then set by `set`, SQL) and an ordinary neighbour after it. */
async function oddAndNeighbour(set: string): Promise<{ odd: string; neighbour: string }> {
  const { id: odd } = await emit(t.db, { type: 'odd', payload: {} });
  await t.db.execute(`UPDATE outbox_events SET ${set} WHERE id = $1::uuid`, [odd]);
  const { id: neighbour } = await emit(t.db, { type: 'neighbour', payload: {} });
  return { odd, neighbour };
}

async function rows(): Promise<Array<Record<string, unknown>>> {
  return t.db.query(
    `SELECT event_type AS type, status, retry_count, claim_count, expired_claims
     FROM outbox_events ORDER BY seq`,
  );
}

/** One relay cycle: `odd` answered `oddDecision`, the rest sent; returns the ids the publisher was asked about. */
async function relayOnce(oddDecision: PublishDecision, odd: string): Promise<string[]> {
  const publisher = new InMemoryPublisher({ decide: (m) => (m.id === odd ? oddDecision : 'sent') });
  const r = relay(t.db, publisher, { retry: { initialDelay: 0, maxDelay: 0 } });
  try {
    const result = await r.runOnce();
    expect(result.claimed).toBe(2);
  } finally {
    await r.close();
  }
  return publisher.attempts.map((m) => m.id);
}

describe('a row with counters SQL set, in a batch with a healthy neighbour', () => {
  it('attempts spent, refused permanently: FAILED alone, the neighbour SENT', async () => {
    const { odd, neighbour } = await oddAndNeighbour('retry_count = max_retries');
    expect(await relayOnce({ permanent: 'no' }, odd)).toEqual([odd, neighbour]);
    expect(await rows()).toMatchObject([
      { type: 'odd', status: 'FAILED', retry_count: 5 },
      { type: 'neighbour', status: 'SENT' },
    ]);
  });

  it('retry_count = max_retries = 2^31-1, refused for now: FAILED, no integer overflow', async () => {
    const { odd } = await oddAndNeighbour(`max_retries = ${INT_MAX}, retry_count = ${INT_MAX}`);
    await relayOnce({ retryable: 'no' }, odd);
    expect(await rows()).toMatchObject([
      { type: 'odd', status: 'FAILED', retry_count: INT_MAX },
      { type: 'neighbour', status: 'SENT' },
    ]);
  });

  it('retry_count one short of max_retries = 2^31-1: its last attempt, FAILED', async () => {
    const { odd } = await oddAndNeighbour(`max_retries = ${INT_MAX}, retry_count = ${INT_MAX - 1}`);
    await relayOnce({ retryable: 'no' }, odd);
    expect(await rows()).toMatchObject([
      { type: 'odd', status: 'FAILED', retry_count: INT_MAX },
      { type: 'neighbour', status: 'SENT' },
    ]);
  });

  it('claim_count 2^31-1: claimed with its neighbour (the count saturates), both SENT', async () => {
    const { odd, neighbour } = await oddAndNeighbour(`claim_count = ${INT_MAX}`);
    expect(await relayOnce('sent', odd)).toEqual([odd, neighbour]);
    expect(await rows()).toMatchObject([
      { type: 'odd', status: 'SENT', claim_count: INT_MAX },
      { type: 'neighbour', status: 'SENT', claim_count: 1 },
    ]);
  });

  it('expired_claims 2^31-1, lease expired: recovery poisons it alone, requeues the neighbour', async () => {
    const { odd } = await oddAndNeighbour(`expired_claims = ${INT_MAX}`);
    const store = relayStore(t.db);
    await store.claim({ token: randomUUID(), limit: 10, leaseMs: 60_000, failedHead: 'block' });
    await expireLeases(t.db);
    const { requeued, poisoned } = await store.recover({ limit: 10, maxClaims: 3 });
    expect({ requeued, poisoned: poisoned.map((p) => p.id) }).toEqual({ requeued: 1, poisoned: [odd] });
    expect(await rows()).toMatchObject([
      { type: 'odd', status: 'FAILED', expired_claims: INT_MAX },
      { type: 'neighbour', status: 'PENDING', expired_claims: 1 },
    ]);
  });

  it('expired_claims 2^31-1: the admin release hands both back', async () => {
    await oddAndNeighbour(`expired_claims = ${INT_MAX}`);
    const token = randomUUID();
    await relayStore(t.db).claim({ token, limit: 10, leaseMs: 60_000, failedHead: 'block' });
    const { released } = await createOutboxAdmin(t.db).release({ claimToken: token, force: true });
    expect(released).toHaveLength(2);
    expect(await rows()).toMatchObject([
      { type: 'odd', status: 'PENDING', expired_claims: INT_MAX },
      { type: 'neighbour', status: 'PENDING', expired_claims: 1 },
    ]);
  });
});
