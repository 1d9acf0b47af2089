/**
 * Review 96: close() racing start() and runOnce() in every order while batches are pipelined.
 * After close() resolves: state 'closed', no row left claimed, every SENT row was published,
 * every runOnce() either resolved or rejected with FERRY_CLOSED, start() after close() throws
 * FERRY_CLOSED; a new relay then drains the rest.
 */
import {
  createRelay,
  emitMany,
  FerryError,
  type OutboxMessage,
  type Publisher,
  type Relay,
} from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { drainAll, relay, silent, waitFor } from './outbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

type Step = 'start' | 'runOnce' | 'close' | 'tick';

/** Every order of the three calls, with and without a turn of the event loop between them. */
function orders(): Step[][] {
  const perms: Step[][] = [];
  const calls: Step[] = ['start', 'runOnce', 'close'];
  const permute = (rest: Step[], acc: Step[]): void => {
    if (rest.length === 0) perms.push(acc);
    rest.forEach((s, i) => permute([...rest.slice(0, i), ...rest.slice(i + 1)], [...acc, s]));
  };
  permute(calls, []);
  const out: Step[][] = [];
  for (const p of perms) {
    out.push(p);
    out.push(p.flatMap((s): Step[] => [s, 'tick']));
    out.push(['start', 'tick', ...p.filter((s) => s !== 'start'), 'runOnce']);
  }
  return out;
}

function slow(inner: InMemoryPublisher, log: OutboxMessage[]): Publisher {
  return {
    system: 'memory',
    publish: async (messages, signal) => {
      await new Promise((resolve) => setTimeout(resolve, 15));
      const outcomes = await inner.publish(messages, signal);
      for (const m of messages) if (outcomes.some((o) => o.id === m.id && o.status === 'sent')) log.push(m);
      return outcomes;
    },
  };
}

describe('close() racing start() and runOnce()', () => {
  it.each(orders().map((o) => [o.join(' '), o] as const))('%s', async (_name, steps) => {
    await t.db.execute('DELETE FROM outbox_events');
    // One statement for the 40 events (in order, as 40 emits would seq them).
    await emitMany(
      t.db,
      Array.from({ length: 40 }, (_, n) => ({ type: 'r', payload: { n }, orderingKey: `k${n % 5}` })),
    );
    const log: OutboxMessage[] = [];
    const r: Relay = relay(t.db, slow(new InMemoryPublisher(), log), {
      batchSize: 2,
      pipelineDepth: 3,
      pollInterval: 20,
    });
    const outcomes: Promise<unknown>[] = [];
    let closed: Promise<void> | undefined;
    for (const step of steps) {
      if (step === 'tick') await new Promise((resolve) => setTimeout(resolve, 30));
      else if (step === 'close') closed = r.close();
      else if (step === 'runOnce') outcomes.push(r.runOnce().catch((e: unknown) => e));
      else if (closed) expect(() => r.start()).toThrow(FerryError);
      else r.start();
    }
    await closed;
    expect(r.state).toBe('closed');
    for (const outcome of await Promise.all(outcomes)) {
      if (outcome instanceof Error) expect(outcome).toMatchObject({ code: 'FERRY_CLOSED' });
    }
    const rows = await t.db.query<{ id: string; status: string; claim_token: string | null }>(
      `SELECT id::text AS id, status, claim_token::text AS claim_token FROM outbox_events`,
    );
    expect(rows.filter((row) => row.status === 'PROCESSING' || row.claim_token !== null)).toEqual([]);
    const published = new Set(log.map((m) => m.id));
    expect(rows.filter((row) => row.status === 'SENT' && !published.has(row.id))).toEqual([]);
    const next = relay(t.db, slow(new InMemoryPublisher(), log));
    await drainAll(next, t.db);
    await next.close();
    const [left] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM outbox_events WHERE status <> 'SENT'`,
    );
    expect(left?.n).toBe(0);
  });
});

describe('close() while pipelined batches wait for a publisher that never answers', () => {
  it('resolves past shutdownTimeout, reports the batches lost and gives their rows up, held until their lease ends', async () => {
    await t.db.execute('DELETE FROM outbox_events');
    await emitMany(
      t.db,
      Array.from({ length: 12 }, (_, n) => ({ type: 'h', payload: { n }, orderingKey: `k${n}` })),
    );
    let calls = 0;
    const hanging: Publisher = {
      system: 'memory',
      publish: () => {
        calls += 1;
        return new Promise(() => undefined);
      },
    };
    const events: string[] = [];
    const r = createRelay({
      db: t.db,
      publisher: hanging,
      logger: silent,
      options: { batchSize: 2, pipelineDepth: 3, shutdownTimeout: 200 },
      observer: (event) => void events.push(event.type),
    });
    r.start();
    const once = r.runOnce();
    await waitFor(() => calls >= 4);
    await r.close();
    await expect(once).resolves.toMatchObject({ lost: 2 });
    expect(r.state).toBe('closed');
    expect(events.filter((type) => type === 'lease-lost')).toHaveLength(calls);
    const [held] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM outbox_events
       WHERE status = 'PENDING' AND next_attempt_at > now() AND expired_claims = 0`,
    );
    expect(held?.n).toBe(calls * 2);
  });
});
