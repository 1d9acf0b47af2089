/**
 * Review 154: spec/000 clause by clause as a user tests it (public API, real PostgreSQL): the
 * clauses review 116 and the outbox suites left unproven or proven on one row only.
 */
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import {
  createEmitter,
  createOutboxAdmin,
  createRelay,
  emit,
  FerryConfigError,
  resolveOutboxOptions,
  type OutboxMessage,
  type Publisher,
  type PublishOutcome,
} from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { relay, silent, statusOf, waitFor } from './outbox/helpers';

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

const failing = () => new InMemoryPublisher({ decide: () => ({ retryable: 'broker said no' }) });

/** Fakes the Node clock (Date) alone, `offsetMs` off the real one and moving with it. */
function skewNodeClock(offsetMs: number): void {
  jest.useFakeTimers({
    now: Date.now() + offsetMs,
    advanceTimers: true,
    doNotFake: [
      'hrtime',
      'nextTick',
      'performance',
      'queueMicrotask',
      'setImmediate',
      'clearImmediate',
      'setInterval',
      'clearInterval',
      'setTimeout',
      'clearTimeout',
    ],
  });
}

async function dbNowMs(): Promise<number> {
  const [row] = await t.db.query<{ ms: number }>(`SELECT extract(epoch FROM now())::float8 * 1000 AS ms`);
  return row!.ms;
}

describe('review154: due times are on the PostgreSQL clock, whatever the Node clock says', () => {
  afterEach(() => {
    jest.useRealTimers();
  });
  const week = 7 * 24 * 3_600_000;
  it.each([
    ['a week ahead', week],
    ['a week behind', -week],
  ])('Node clock %s: emit, the scheduled retry and stats follow the database', async (_name, offset) => {
    skewNodeClock(offset);
    expect(Math.abs(Date.now() - (await dbNowMs()))).toBeGreaterThan(week / 2);
    const { id } = await emit(t.db, { type: 'spec.clock', payload: {} });
    const admin = createOutboxAdmin(t.db);
    const emitted = (await admin.get(id))!;
    // Within a generous minute of the database's now(), a week from the Node clock.
    expect(Math.abs(emitted.createdAt.getTime() - (await dbNowMs()))).toBeLessThan(60_000);
    expect(emitted.nextAttemptAt.getTime()).toBe(emitted.createdAt.getTime());
    const stats = await admin.stats();
    expect(stats.pending).toBe(1);
    expect(stats.oldestPendingAgeMs).toBeGreaterThanOrEqual(0);
    expect(stats.oldestPendingAgeMs).toBeLessThan(60_000);

    const r = relay(t.db, failing(), { retry: { initialDelay: 3_600_000 } });
    expect(await r.runOnce()).toMatchObject({ claimed: 1 });
    const failed = (await admin.get(id))!;
    expect(failed).toMatchObject({ status: 'PENDING', retryCount: 1, lastError: 'broker said no' });
    // Exactly initialDelay after the failure's commit, on the database clock.
    expect(failed.nextAttemptAt.getTime() - failed.updatedAt.getTime()).toBe(3_600_000);
    // Not due: a Node clock a week ahead does not make it so.
    expect(await r.runOnce()).toMatchObject({ claimed: 0 });
    await r.close();
  });
});

describe('review154: relays with other backoff settings never recompute a scheduled retry', () => {
  it('a due time set by one relay holds for a relay configured with no delay at all', async () => {
    const { id } = await emit(t.db, { type: 'spec.schedule', payload: {} });
    const slow = relay(t.db, failing(), { retry: { initialDelay: 3_600_000 } });
    expect(await slow.runOnce()).toMatchObject({ claimed: 1 });
    const scheduled = (await createOutboxAdmin(t.db).get(id))!.nextAttemptAt;
    const eager = relay(t.db, new InMemoryPublisher(), { retry: { backoff: 'fixed', initialDelay: 0 } });
    for (let i = 0; i < 12; i += 1) expect(await eager.runOnce()).toMatchObject({ claimed: 0 });
    expect((await createOutboxAdmin(t.db).get(id))!.nextAttemptAt).toEqual(scheduled);
    await slow.close();
    await eager.close();
  });
});

/** Fates by payload: what the broker answers for each event. */
type Fate = 'sent' | 'retryable' | 'permanent' | 'hold';
function fatedPublisher(): Publisher {
  return {
    publish: async (messages: readonly OutboxMessage[]): Promise<PublishOutcome[]> =>
      messages.flatMap((m): PublishOutcome[] => {
        const fate = (m.payload as { fate: Fate }).fate;
        if (fate === 'sent') return [{ id: m.id, status: 'sent' }];
        if (fate === 'permanent') return [{ id: m.id, status: 'permanent', error: `refused ${m.type}` }];
        if (fate === 'retryable') return [{ id: m.id, status: 'retryable', error: `timeout ${m.type}` }];
        return [];
      }),
  };
}

describe('review154: the spec’s monitoring queries on a mixed backlog', () => {
  it('count FAILED events by type and list recent failures, exactly', async () => {
    const one = createEmitter({ retry: { maxRetries: 1 } });
    const two = createEmitter({ retry: { maxRetries: 2 } });
    // In order of creation (one transaction each, so created_at grows).
    const plan: Array<[string, Fate, typeof one, string]> = [
      ['a1', 'retryable', one, 'order.a'],
      ['b1', 'sent', one, 'order.b'],
      ['c1', 'permanent', two, 'order.c'],
      ['a2', 'permanent', two, 'order.a'],
      ['a3', 'sent', one, 'order.a'],
      ['b2', 'retryable', two, 'order.b'],
      ['c2', 'retryable', one, 'order.c'],
      ['a4', 'hold', one, 'order.a'], // left PENDING, then marked FAILED by an operator
      ['a5', 'hold', one, 'order.a'], // left PENDING
    ];
    const ids = new Map<string, string>();
    for (const [name, fate, emitter, type] of plan) {
      ids.set(name, (await emitter.emit(t.db, { type, payload: { fate } })).id);
    }
    const publisher = fatedPublisher();
    const r = relay(t.db, publisher, { retry: { initialDelay: 0 } });
    // Attempts: every 'retryable' row of max 2 fails twice; the held rows' publish answers
    // nothing for them, which is a retryable failure too: so hold them back from the claim.
    await t.db.execute(
      `UPDATE outbox_events SET next_attempt_at = now() + interval '1 hour' WHERE id = ANY($1::uuid[])`,
      [[ids.get('a4'), ids.get('a5')]],
    );
    for (let i = 0; i < 3; i += 1) await r.runOnce();
    await r.close();
    expect(
      await createOutboxAdmin(t.db).markFailed(ids.get('a4')!, 'operator: customer cancelled'),
    ).toMatchObject({ outcome: 'applied' });

    const byType = await t.db.query<{ event_type: string; failed_count: string; latest: Date }>(
      `SELECT event_type, COUNT(*) AS failed_count, MAX(created_at) AS latest
FROM outbox_events
WHERE status = 'FAILED'
GROUP BY event_type
ORDER BY failed_count DESC;`,
    );
    const created = async (name: string) => (await createOutboxAdmin(t.db).get(ids.get(name)!))!.createdAt;
    expect(byType.map((row) => [row.event_type, Number(row.failed_count), new Date(row.latest)])).toEqual([
      ['order.a', 3, await created('a4')],
      ['order.c', 2, await created('c2')],
      ['order.b', 1, await created('b2')],
    ]);

    const recent = await t.db.query<{
      id: string;
      event_type: string;
      retry_count: number;
      last_error: string;
    }>(`SELECT id, event_type, retry_count, last_error, created_at
FROM outbox_events
WHERE status = 'FAILED'
ORDER BY created_at DESC
LIMIT 20;`);
    expect(recent.map((row) => [row.id, row.event_type, row.retry_count, row.last_error])).toEqual([
      [ids.get('a4'), 'order.a', 0, 'operator: customer cancelled'],
      [ids.get('c2'), 'order.c', 1, 'timeout order.c'],
      [ids.get('b2'), 'order.b', 2, 'timeout order.b'],
      [ids.get('a2'), 'order.a', 1, 'refused order.a'],
      [ids.get('c1'), 'order.c', 1, 'refused order.c'],
      [ids.get('a1'), 'order.a', 1, 'timeout order.a'],
    ]);
    const stats = await createOutboxAdmin(t.db).stats();
    expect(stats).toMatchObject({ pending: 1, processing: 0, sent: 2, failed: 6 });
  });
});

describe('review154: tenant-scoped manual retry never answers about another tenant’s event', () => {
  async function inStatus(status: 'PENDING' | 'SENT' | 'FAILED', tenantId: string | null): Promise<string> {
    const { id } = await emit(t.db, {
      type: 'spec.tenant',
      payload: { fate: status === 'SENT' ? 'sent' : 'permanent' },
      tenantId,
      maxRetries: 1,
    });
    if (status === 'PENDING') return id;
    const r = relay(t.db, fatedPublisher());
    await r.runOnce();
    await r.close();
    return id;
  }

  it.each(['PENDING', 'SENT', 'FAILED'] as const)(
    'another tenant’s or a global %s event: not_found, get null, nothing changed',
    async (status) => {
      const theirs = await inStatus(status, 'tenant-b');
      const global = await inStatus(status, null);
      const otherCase = await inStatus(status, 'Tenant-A');
      const scoped = createOutboxAdmin(t.db).forTenant('tenant-a');
      for (const id of [theirs, global, otherCase]) {
        const before = await createOutboxAdmin(t.db).get(id);
        expect(before?.status).toBe(status);
        expect(await scoped.get(id)).toBeNull();
        expect(await scoped.retry(id)).toEqual({ id, outcome: 'not_found' });
        expect(await scoped.markFailed(id, 'not yours')).toEqual({ id, outcome: 'not_found' });
        expect(await scoped.retryMany([id])).toEqual([{ id, outcome: 'not_found' }]);
        expect(await createOutboxAdmin(t.db).get(id)).toEqual(before);
      }
    },
  );

  it('retryMany in a tenant scope: applied, conflict, not_found per id, in order', async () => {
    const failedMine = await inStatus('FAILED', 'tenant-a');
    const sentMine = await inStatus('SENT', 'tenant-a');
    const failedTheirs = await inStatus('FAILED', 'tenant-b');
    const missing = randomUUID();
    const scoped = createOutboxAdmin(t.db).forTenant('tenant-a');
    expect(await scoped.retryMany([failedTheirs, failedMine, missing, sentMine])).toEqual([
      { id: failedTheirs, outcome: 'not_found' },
      { id: failedMine, outcome: 'applied' },
      { id: missing, outcome: 'not_found' },
      { id: sentMine, outcome: 'conflict' },
    ]);
    expect((await createOutboxAdmin(t.db).get(failedTheirs))!.status).toBe('FAILED');
  });
});

describe('review154: markFailed', () => {
  it('stops a PENDING event scheduled for a retry: FAILED with the reason, counters kept, never published', async () => {
    const { id } = await emit(t.db, { type: 'spec.mark', payload: {}, maxRetries: 5 });
    const r = relay(t.db, failing(), { retry: { initialDelay: 0 } });
    await r.runOnce();
    await r.runOnce();
    const admin = createOutboxAdmin(t.db);
    expect(await admin.get(id)).toMatchObject({ status: 'PENDING', retryCount: 2, claimCount: 2 });
    expect(await admin.markFailed(id, 'operator: poison')).toEqual({ id, outcome: 'applied' });
    const marked = (await admin.get(id))!;
    expect(marked).toMatchObject({
      status: 'FAILED',
      retryCount: 2,
      maxRetries: 5,
      claimCount: 2,
      lastError: 'operator: poison',
    });
    expect(marked.failedAt).toBeInstanceOf(Date);
    const publisher = new InMemoryPublisher();
    const later = relay(t.db, publisher);
    for (let i = 0; i < 11; i += 1) expect(await later.runOnce()).toMatchObject({ claimed: 0 });
    expect(publisher.attempts).toHaveLength(0);
    // A second markFailed is a conflict; retry brings it back with a fresh budget.
    expect(await admin.markFailed(id, 'again')).toEqual({ id, outcome: 'conflict' });
    expect(await admin.retry(id)).toEqual({ id, outcome: 'applied' });
    expect(await later.runOnce()).toMatchObject({ claimed: 1, sent: 1 });
    expect(publisher.delivered.map((m) => m.attempt)).toEqual([1]);
    await r.close();
    await later.close();
  });

  it.each([
    ['an empty reason', ''],
    ['a reason that is no string', 42],
    ['a reason over 4,000 characters', 'x'.repeat(4_001)],
  ])('refuses %s, changing nothing', async (_name, reason) => {
    const { id } = await emit(t.db, { type: 'spec.mark', payload: {} });
    await expect(createOutboxAdmin(t.db).markFailed(id, reason as string)).rejects.toMatchObject({
      code: 'FERRY_VALIDATION_FAILED',
      field: 'reason',
    });
    expect(await statusOf(t.db, id)).toMatchObject({ status: 'PENDING', last_error: null });
  });
});

describe('review154: stuckThreshold, the deprecated alias, sets the lease PostgreSQL holds', () => {
  function held(): Publisher & { started: Promise<void>; release: () => void } {
    let release!: () => void;
    let started!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const startedPromise = new Promise<void>((resolve) => (started = resolve));
    return {
      started: startedPromise,
      release,
      publish: async (messages: readonly OutboxMessage[]): Promise<PublishOutcome[]> => {
        started();
        await gate;
        return messages.map((m) => ({ id: m.id, status: 'sent' }));
      },
    };
  }
  it.each([
    ['stuckThreshold', { stuckThreshold: 240_000 }],
    ['both, equal', { stuckThreshold: 240_000, lease: { duration: 240_000 } }],
    ['lease.duration', { lease: { duration: 240_000 } }],
  ])('%s: the claim is leased for exactly that long', async (_name, options) => {
    const { id } = await emit(t.db, { type: 'spec.alias', payload: {} });
    const publisher = held();
    const r = createRelay({ db: t.db, publisher, options, logger: silent });
    expect(r.options.lease.duration).toBe(240_000);
    const cycle = r.runOnce();
    await publisher.started;
    const [row] = await t.db.query<{ ms: number }>(
      `SELECT extract(epoch FROM lease_expires_at - claimed_at)::float8 * 1000 AS ms FROM outbox_events WHERE id = $1::uuid`,
      [id],
    );
    expect(row?.ms).toBe(240_000);
    publisher.release();
    expect(await cycle).toMatchObject({ sent: 1 });
    await r.close();
  });

  it('both, different: refused naming stuckThreshold, before anything runs', () => {
    expect(() =>
      createRelay({
        db: t.db,
        publisher: new InMemoryPublisher(),
        options: { stuckThreshold: 240_000, lease: { duration: 300_000 } },
        logger: silent,
      }),
    ).toThrow(expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option: 'stuckThreshold' }));
  });
});

describe('review154: a Node clock stepped back does not stretch an open circuit', () => {
  afterEach(() => {
    jest.useRealTimers();
  });
  it('the relay probes the broker again after its open period, not after the step', async () => {
    skewNodeClock(0);
    await emit(t.db, { type: 'spec.circuit', payload: {} });
    let down = true;
    const publisher = new InMemoryPublisher({
      decide: () => (down ? { unavailable: 'broker down' } : 'sent'),
    });
    const r = createRelay({
      db: t.db,
      publisher,
      logger: silent,
      options: { circuit: { failureThreshold: 1, openMs: 1_000, maxOpenMs: 1_000 } },
    });
    expect(await r.runOnce()).toMatchObject({ claimed: 1, unavailable: 1 });
    expect(r.circuit).toBe('open');
    // An NTP step: the Node clock goes back an hour while the circuit is open.
    jest.setSystemTime(Date.now() - 3_600_000);
    const outage = r.circuitOutage!;
    expect(outage.nextProbeAt.getTime() - Date.now()).toBeLessThanOrEqual(1_000);
    expect(outage.since.getTime()).toBeLessThanOrEqual(Date.now());
    down = false;
    // Half-open after its 1 s period (20 s: a generous bound against a hang), then the probe sends.
    await waitFor(() => r.circuit !== 'open');
    expect(await r.runOnce()).toMatchObject({ claimed: 1, sent: 1 });
    expect(r.circuit).toBe('closed');
    await r.close();
  });
});

describe('review154: lost_claim in a tenant scope', () => {
  /** Holds `id` in a concurrent transaction that moves it to `to`; returns how to commit it. */
  async function concurrent(id: string, set: string): Promise<{ commit: () => Promise<void> }> {
    const other = listened(new Client({ connectionString: t.url }));
    await other.connect();
    await other.query('BEGIN');
    await other.query(`UPDATE outbox_events SET ${set} WHERE id = $1::uuid`, [id]);
    return {
      commit: async () => {
        await other.query('COMMIT');
        await other.end();
      },
    };
  }
  async function waitingOnLock(): Promise<void> {
    await waitFor(async () => {
      const [row] = await t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`,
      );
      return (row?.n ?? 0) > 0;
    });
  }
  async function failedEvent(tenantId: string): Promise<string> {
    const { id } = await emit(t.db, { type: 'spec.lost', payload: {}, tenantId, maxRetries: 1 });
    const r = relay(t.db, failing());
    await r.runOnce();
    await r.close();
    expect((await createOutboxAdmin(t.db).get(id))!.status).toBe('FAILED');
    return id;
  }

  it('retry: a concurrent transition of the tenant’s own FAILED event wins', async () => {
    const id = await failedEvent('tenant-a');
    const other = await concurrent(id, `status = 'PENDING', failed_at = NULL`);
    const pending = createOutboxAdmin(t.db).forTenant('tenant-a').retry(id);
    await waitingOnLock();
    await other.commit();
    expect(await pending).toEqual({ id, outcome: 'lost_claim' });
  });

  it('markFailed: a relay claiming the tenant’s own PENDING event first wins', async () => {
    const { id } = await emit(t.db, { type: 'spec.lost', payload: {}, tenantId: 'tenant-a' });
    const other = await concurrent(
      id,
      `status = 'PROCESSING', claim_token = gen_random_uuid(), claimed_at = now(),
       lease_expires_at = now() + interval '1 minute', claim_count = claim_count + 1`,
    );
    const pending = createOutboxAdmin(t.db).forTenant('tenant-a').markFailed(id, 'stop it');
    await waitingOnLock();
    await other.commit();
    expect(await pending).toEqual({ id, outcome: 'lost_claim' });
    expect((await createOutboxAdmin(t.db).get(id))!.status).toBe('PROCESSING');
  });

  it('another tenant’s event in a concurrent transition: not_found at once, never lost_claim', async () => {
    const theirs = await failedEvent('tenant-b');
    const other = await concurrent(theirs, `status = 'PENDING', failed_at = NULL`);
    const scoped = createOutboxAdmin(t.db).forTenant('tenant-a');
    // Answered while the other transaction still holds the row: the tenant never waits on it.
    expect(await scoped.retry(theirs)).toEqual({ id: theirs, outcome: 'not_found' });
    expect(await scoped.markFailed(theirs, 'x')).toEqual({ id: theirs, outcome: 'not_found' });
    await other.commit();
    expect(await scoped.retry(theirs)).toEqual({ id: theirs, outcome: 'not_found' });
  });
});

describe('review154: the default maxDelay caps the default exponential backoff on the database', () => {
  it('attempt 17 waits 65,536 s; from attempt 18 on, 86,400,000 ms (a day), not 131,072 s', async () => {
    const { id } = await emit(t.db, { type: 'spec.defaultCap', payload: {}, maxRetries: 20 });
    const r = relay(t.db, failing());
    const gaps: number[] = [];
    for (let attempt = 1; attempt <= 19; attempt += 1) {
      expect(await r.runOnce()).toMatchObject({ claimed: 1 });
      const record = (await createOutboxAdmin(t.db).get(id))!;
      expect(record).toMatchObject({ status: 'PENDING', retryCount: attempt });
      gaps.push(record.nextAttemptAt.getTime() - record.updatedAt.getTime());
      await t.db.execute(`UPDATE outbox_events SET next_attempt_at = now() WHERE id = $1::uuid`, [id]);
    }
    expect(gaps.slice(0, 4)).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(gaps.slice(16)).toEqual([65_536_000, 86_400_000, 86_400_000]);
    expect(await r.runOnce()).toMatchObject({ claimed: 1, failed: 1 });
    expect(await createOutboxAdmin(t.db).get(id)).toMatchObject({ status: 'FAILED', retryCount: 20 });
    await r.close();
  });
});

describe('review154: every retry and lease option refuses hostile values, typed and named', () => {
  const hostile: unknown[] = [
    -1,
    Number.NaN,
    Infinity,
    -Infinity,
    1.5,
    '1000',
    2 ** 31,
    1e300,
    null,
    true,
    {},
  ];
  const keys = [
    'retry.initialDelay',
    'retry.maxDelay',
    'retry.backoff',
    'lease.duration',
    'lease.heartbeatInterval',
    'lease.heartbeatFailureTolerance',
    'stuckThreshold',
  ];
  const cases = keys.flatMap((key) => hostile.map((value): [string, unknown] => [key, value]));
  it.each(cases)('createRelay: %s = %p is FERRY_CONFIG_INVALID naming it', (key, value) => {
    const [group, name] = key.split('.') as [string, string | undefined];
    const options = name === undefined ? { [group]: value } : { [group]: { [name]: value } };
    const make = () =>
      createRelay({
        db: t.db,
        publisher: new InMemoryPublisher(),
        options: options as never,
        logger: silent,
      });
    expect(make).toThrow(FerryConfigError);
    expect(make).toThrow(expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option: key }));
  });

  it.each([
    [{ initialDelay: 5_000, maxDelay: 4_999 }, 'retry.initialDelay (5000)'],
    [{ maxDelay: 500 }, 'retry.initialDelay (1000, the default)'],
    [{ backoff: 'fixed' as const, initialDelay: 2_000, maxDelay: 1_000 }, 'retry.initialDelay (2000)'],
  ])('maxDelay below the base delay %p is refused naming retry.maxDelay', (retry, floor) => {
    expect(() => resolveOutboxOptions({ retry })).toThrow(
      expect.objectContaining({
        code: 'FERRY_CONFIG_INVALID',
        option: 'retry.maxDelay',
        message: expect.stringContaining(floor),
      }),
    );
  });

  it.each([0, -1, Number.NaN, Infinity, 1.5, 1_001, '5', null])(
    'maxRetries %p: the emitter’s FERRY_CONFIG_INVALID, an event’s FERRY_VALIDATION_FAILED, nothing stored',
    async (maxRetries) => {
      expect(() => createEmitter({ retry: { maxRetries: maxRetries as number } })).toThrow(
        expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option: 'retry.maxRetries' }),
      );
      await expect(
        emit(t.db, { type: 'spec.hostile', payload: {}, maxRetries: maxRetries as number }),
      ).rejects.toMatchObject({ code: 'FERRY_VALIDATION_FAILED', field: 'maxRetries' });
      const [row] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox_events`);
      expect(row?.n).toBe(0);
    },
  );
});
