/**
 * Review 116: spec/000 (outbox retry, backoff, leases, recovery, manual reprocessing) clause by
 * clause against real PostgreSQL, through the public API only. The clauses already proven
 * elsewhere are listed in the review's report; these are the ones no test proved on the database.
 */
import { randomUUID } from 'node:crypto';
import {
  createEmitter,
  createOutboxAdmin,
  createRelay,
  emit,
  FerryConfigError,
  type OutboxMessage,
  type OutboxOptions,
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

/** The scheduled gap of `id` (next_attempt_at − the completion's now()), in ms, exactly. */
async function gapMs(id: string): Promise<number> {
  return Number((await statusOf(t.db, id)).gap_ms);
}

/** Lets a scheduled retry come due now, as if its backoff had elapsed on the database clock. */
async function elapse(id: string): Promise<void> {
  await t.db.execute(`UPDATE outbox_events SET next_attempt_at = now() WHERE id = $1::uuid`, [id]);
}

/** Fails `id` through the relay until it is FAILED; the gap after each failure that left attempts. */
async function gapsUntilFailed(id: string, options: OutboxOptions): Promise<number[]> {
  const r = relay(t.db, failing(), options);
  const gaps: number[] = [];
  for (let i = 0; i < 1_001; i += 1) {
    const result = await r.runOnce();
    expect(result.claimed).toBe(1);
    if ((await statusOf(t.db, id)).status === 'FAILED') break;
    gaps.push(await gapMs(id));
    await elapse(id);
  }
  return gaps;
}

describe('review116: the backoff table, persisted on the PostgreSQL clock', () => {
  it('defaults: attempts 1-4 are followed by 1 s, 2 s, 4 s, 8 s; the 5th failure is FAILED', async () => {
    const { id } = await emit(t.db, { type: 'spec.backoff', payload: {} });
    const attempts = failing();
    const r = relay(t.db, attempts);
    const gaps: number[] = [];
    const scheduled: Array<number | undefined> = [];
    for (let attempt = 1; attempt <= 5; attempt += 1) {
      expect(await r.runOnce()).toMatchObject({ claimed: 1 });
      const row = await statusOf(t.db, id);
      if (attempt < 5) {
        expect(row).toMatchObject({ status: 'PENDING', retry_count: attempt, last_error: 'broker said no' });
        gaps.push(await gapMs(id));
        const record = await createOutboxAdmin(t.db).get(id);
        const [now] = await t.db.query<{ updated: Date }>(
          `SELECT updated_at AS updated FROM outbox_events WHERE id = $1::uuid`,
          [id],
        );
        scheduled.push(record!.nextAttemptAt.getTime() - now!.updated.getTime());
        // Not due before its time: another cycle claims nothing.
        expect(await r.runOnce()).toMatchObject({ claimed: 0 });
        await elapse(id);
      }
    }
    expect(gaps).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(scheduled).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(await statusOf(t.db, id)).toMatchObject({
      status: 'FAILED',
      retry_count: 5,
      last_error: 'broker said no',
    });
    expect(attempts.attempts.map((m) => m.attempt)).toEqual([1, 2, 3, 4, 5]);
    const record = await createOutboxAdmin(t.db).get(id);
    expect(record).toMatchObject({ status: 'FAILED', retryCount: 5, maxRetries: 5 });
    expect(record?.failedAt).toBeInstanceOf(Date);
  });

  it('fixed: initialDelay after every attempt', async () => {
    const { id } = await emit(t.db, { type: 'spec.fixed', payload: {}, maxRetries: 4 });
    expect(await gapsUntilFailed(id, { retry: { backoff: 'fixed', initialDelay: 1_000 } })).toEqual([
      1_000, 1_000, 1_000,
    ]);
  });

  it('maxDelay caps the exponential delay', async () => {
    const { id } = await emit(t.db, { type: 'spec.cap', payload: {}, maxRetries: 6 });
    expect(await gapsUntilFailed(id, { retry: { initialDelay: 1_000, maxDelay: 5_000 } })).toEqual([
      1_000, 2_000, 4_000, 5_000, 5_000,
    ]);
  });

  it('the bound 2,147,483,647 ms is scheduled exactly; a delay growing past it stays at it', async () => {
    const bound = 2_147_483_647;
    const { id } = await emit(t.db, { type: 'spec.bound', payload: {}, maxRetries: 1_000 });
    const r = relay(t.db, failing(), { retry: { initialDelay: bound, maxDelay: bound } });
    await r.runOnce();
    expect(await gapMs(id)).toBe(bound);
    // The 60th attempt: 2^59 s uncapped.
    await t.db.execute(
      `UPDATE outbox_events SET retry_count = 59, next_attempt_at = now() WHERE id = $1::uuid`,
      [id],
    );
    const late = relay(t.db, failing(), { retry: { initialDelay: 1_000, maxDelay: bound } });
    expect(await late.runOnce()).toMatchObject({ claimed: 1, retried: 1 });
    expect(await statusOf(t.db, id)).toMatchObject({ status: 'PENDING', retry_count: 60 });
    expect(await gapMs(id)).toBe(bound);
  });

  it('initialDelay at the bound with maxDelay left out: maxDelay rises to it, nothing refused', () => {
    const r = createRelay({
      db: t.db,
      publisher: new InMemoryPublisher(),
      logger: silent,
      options: { retry: { initialDelay: 2_147_483_647 } },
    });
    expect(r.options.retry).toMatchObject({ initialDelay: 2_147_483_647, maxDelay: 2_147_483_647 });
  });

  const aboveOrOdd: Array<[string, OutboxOptions]> = [
    ['retry.maxDelay', { retry: { maxDelay: 2_147_483_648 } }],
    ['retry.initialDelay', { retry: { initialDelay: 2_147_483_648 } }],
    ['retry.maxDelay', { retry: { maxDelay: Number.POSITIVE_INFINITY } }],
    ['retry.maxDelay', { retry: { maxDelay: Number.NaN } }],
    ['retry.maxDelay', { retry: { maxDelay: 1_000.5 } }],
    ['retry.maxDelay', { retry: { maxDelay: '86400000' as never } }],
    ['retry.initialDelay', { retry: { initialDelay: -1 } }],
    ['retry.backoff', { retry: { backoff: 'linear' as never } }],
    ['lease.duration', { lease: { duration: 2_147_483_648 } }],
    ['lease.heartbeatInterval', { lease: { heartbeatInterval: 2_147_483_648 } }],
    ['stuckThreshold', { stuckThreshold: 2_147_483_648 }],
  ];
  it.each(aboveOrOdd)('createRelay refuses %s just above the bound or not an integer', (option, options) => {
    const make = () => createRelay({ db: t.db, publisher: new InMemoryPublisher(), logger: silent, options });
    expect(make).toThrow(FerryConfigError);
    expect(make).toThrow(expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option }));
  });
});

describe('review116: max_retries is fixed per row at emit (rolling deploys)', () => {
  it('each row fails after the attempts its emitter stored, whatever emitted beside it or relays it', async () => {
    const before = createEmitter({ retry: { maxRetries: 2 } });
    const after = createEmitter({ retry: { maxRetries: 4 } });
    const a = await before.emit(t.db, { type: 'spec.deploy', payload: { v: 1 } });
    const b = await after.emit(t.db, { type: 'spec.deploy', payload: { v: 2 } });
    const c = await after.emit(t.db, { type: 'spec.deploy', payload: { v: 2 }, maxRetries: 3 });
    const publisher = failing();
    const r = relay(t.db, publisher, { retry: { initialDelay: 0 } });
    for (let i = 0; i < 10; i += 1) await r.runOnce();
    const attempts = (id: string) => publisher.attempts.filter((m) => m.id === id).map((m) => m.attempt);
    expect(attempts(a.id)).toEqual([1, 2]);
    expect(attempts(b.id)).toEqual([1, 2, 3, 4]);
    expect(attempts(c.id)).toEqual([1, 2, 3]);
    const admin = createOutboxAdmin(t.db);
    for (const [id, max] of [
      [a.id, 2],
      [b.id, 4],
      [c.id, 3],
    ] as const) {
      expect(await admin.get(id)).toMatchObject({ status: 'FAILED', retryCount: max, maxRetries: max });
    }
  });

  it('a relay cannot change it: retry.maxRetries on createRelay is refused, naming the emitter', () => {
    expect(() =>
      createRelay({ db: t.db, publisher: failing(), options: { retry: { maxRetries: 1 } }, logger: silent }),
    ).toThrow(expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option: 'retry.maxRetries' }));
  });

  it.each([0, 1_001, 2.5, Number.NaN])('an emitter refuses maxRetries %p', (maxRetries) => {
    expect(() => createEmitter({ retry: { maxRetries } })).toThrow(
      expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option: 'retry.maxRetries' }),
    );
  });
});

/** A publisher that holds every publish until `release()`; `started` resolves at the first. */
function heldPublisher(answerWithinMs?: number): Publisher & { started: Promise<void>; release: () => void } {
  let release!: () => void;
  let started!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const startedPromise = new Promise<void>((resolve) => (started = resolve));
  return {
    started: startedPromise,
    release,
    ...(answerWithinMs === undefined ? {} : { answerWithinMs }),
    publish: async (messages: readonly OutboxMessage[]): Promise<PublishOutcome[]> => {
      started();
      await gate;
      return messages.map((m) => ({ id: m.id, status: 'sent' }));
    },
  };
}

describe('review116: lease recovery every tenth poll, spending no retry', () => {
  /** Leaves `id` claimed by a relay that died: PROCESSING under a token nobody holds, lease expired. */
  async function deadClaim(id: string): Promise<void> {
    await t.db.execute(
      `UPDATE outbox_events SET status = 'PROCESSING', claim_token = $2::uuid, claimed_at = now(),
         lease_expires_at = now() - interval '1 second', claim_count = claim_count + 1
       WHERE id = $1::uuid`,
      [id, randomUUID()],
    );
  }

  it('recovers on cycles 1, 11, 21 only; retry_count stays what failures made it', async () => {
    const { id } = await emit(t.db, { type: 'spec.recover', payload: {}, maxRetries: 10 });
    // Two real failures first: retry_count 2.
    const r0 = relay(t.db, failing(), { retry: { initialDelay: 0 } });
    await r0.runOnce();
    await r0.runOnce();
    expect(await statusOf(t.db, id)).toMatchObject({ status: 'PENDING', retry_count: 2 });

    const publisher = new InMemoryPublisher({ decide: () => ({ retryable: 'still no' }) });
    const r = relay(t.db, publisher, { retry: { initialDelay: 60_000 } });
    const recoveredAt: number[] = [];
    await deadClaim(id);
    for (let cycle = 1; cycle <= 21; cycle += 1) {
      const result = await r.runOnce();
      if (result.recovered > 0) {
        recoveredAt.push(cycle);
        // Recovered: retry_count untouched; published on this cycle as attempt 3, which fails.
        expect(publisher.attempts.at(-1)).toMatchObject({ id, attempt: 3 + recoveredAt.length - 1 });
        await deadClaim(id);
        await elapse(id);
        continue;
      }
      // Between recoveries the expired claim stays where it is: only recovery requeues it.
      expect(await statusOf(t.db, id)).toMatchObject({ status: 'PROCESSING' });
    }
    expect(recoveredAt).toEqual([1, 11, 21]);
    // Three recoveries and three failed attempts (3, 4, 5): the failures alone counted.
    expect(publisher.attempts.map((m) => m.attempt)).toEqual([3, 4, 5]);
    // Claims: 2 failures, 4 dead claims, 3 after recoveries; retries: the 5 failures only.
    expect(await statusOf(t.db, id)).toMatchObject({ status: 'PROCESSING', claim_count: 9, retry_count: 5 });
  });

  it('recovery alone never moves retry_count, however often a claim dies', async () => {
    const { id } = await emit(t.db, { type: 'spec.recover', payload: {}, maxRetries: 1 });
    const idle: Publisher = { publish: async () => [] };
    for (let i = 0; i < 5; i += 1) {
      await deadClaim(id);
      const r = createRelay({ db: t.db, publisher: idle, logger: silent, options: { batchSize: 1 } });
      // maxRetries 1: had recovery spent a retry, the row would be FAILED.
      await t.db.execute(
        `UPDATE outbox_events SET next_attempt_at = now() + interval '1 hour' WHERE id = $1::uuid`,
        [id],
      );
      expect(await r.runOnce()).toMatchObject({ recovered: 1 });
      expect(await statusOf(t.db, id)).toMatchObject({ status: 'PENDING', retry_count: 0 });
    }
  });
});

describe('review116: admin operations never cancel an active PROCESSING publish', () => {
  it('retry and markFailed answer conflict while it publishes; its completion still lands SENT', async () => {
    const { id } = await emit(t.db, { type: 'spec.active', payload: {}, tenantId: 'tenant-a' });
    const publisher = heldPublisher();
    const r = relay(t.db, publisher);
    const cycle = r.runOnce();
    await publisher.started;
    const before = await statusOf(t.db, id);
    expect(before).toMatchObject({ status: 'PROCESSING' });
    for (const admin of [createOutboxAdmin(t.db), createOutboxAdmin(t.db).forTenant('tenant-a')]) {
      expect(await admin.retry(id)).toEqual({ id, outcome: 'conflict' });
      expect(await admin.markFailed(id, 'operator said so')).toEqual({ id, outcome: 'conflict' });
      expect(await admin.retryMany([id])).toEqual([{ id, outcome: 'conflict' }]);
    }
    expect(await createOutboxAdmin(t.db).forTenant('tenant-b').retry(id)).toEqual({
      id,
      outcome: 'not_found',
    });
    expect(await statusOf(t.db, id)).toEqual(before);
    publisher.release();
    expect(await cycle).toMatchObject({ claimed: 1, sent: 1 });
    expect(await statusOf(t.db, id)).toMatchObject({ status: 'SENT', retry_count: 0, last_error: null });
  });

  it('retry of a FAILED row clears its error and completion fields, keeps claim_count, and is due now', async () => {
    const { id } = await emit(t.db, { type: 'spec.retry', payload: {}, maxRetries: 2 });
    const r = relay(t.db, failing(), { retry: { initialDelay: 0 } });
    await r.runOnce();
    await r.runOnce();
    const failedRow = await createOutboxAdmin(t.db).get(id);
    expect(failedRow).toMatchObject({ status: 'FAILED', retryCount: 2, claimCount: 2 });
    expect(await createOutboxAdmin(t.db).retry(id)).toEqual({ id, outcome: 'applied' });
    const record = await createOutboxAdmin(t.db).get(id);
    expect(record).toMatchObject({
      status: 'PENDING',
      retryCount: 0,
      claimCount: 2,
      lastError: null,
      failedAt: null,
      publishedAt: null,
    });
    // Due now: the very next cycle publishes it as attempt 1 of a fresh budget.
    const publisher = new InMemoryPublisher();
    expect(await relay(t.db, publisher).runOnce()).toMatchObject({ claimed: 1, sent: 1 });
    expect(publisher.delivered.map((m) => m.attempt)).toEqual([1]);
    // A second retry of the now SENT row is a conflict.
    expect(await createOutboxAdmin(t.db).retry(id)).toEqual({ id, outcome: 'conflict' });
    await waitFor(async () => (await statusOf(t.db, id)).status === 'SENT');
  });
});

describe('review116: heartbeats keep an active publish claimed', () => {
  // ferry gives up on a publish after one lease.duration unless the publisher declares a longer
  // answerWithinMs (docs/outbox.md); the spec's "not automatically timed out" is left to the lead
  // (review 116's report).
  it('a publish outliving its lease several times over is never recovered by another relay, and completes', async () => {
    const { id } = await emit(t.db, { type: 'spec.heartbeat', payload: {} });
    const publisher = heldPublisher(60_000);
    const holder = relay(t.db, publisher, { lease: { duration: 2_000, heartbeatInterval: 500 } });
    const cycle = holder.runOnce();
    await publisher.started;
    const [claimed] = await t.db.query<{ token: string; lease: Date }>(
      `SELECT claim_token::text AS token, lease_expires_at AS lease FROM outbox_events WHERE id = $1::uuid`,
      [id],
    );
    const other = new InMemoryPublisher();
    // Each fresh relay recovers on its first cycle: three times the lease passes under recovery.
    const seen: Array<{ recovered: number; token: string | undefined }> = [];
    await waitFor(async () => {
      const { recovered } = await relay(t.db, other).runOnce();
      const [row] = await t.db.query<{ token: string; past: boolean }>(
        `SELECT claim_token::text AS token, now() > $2::timestamptz + interval '4 seconds' AS past
         FROM outbox_events WHERE id = $1::uuid`,
        [id, claimed!.lease],
      );
      seen.push({ recovered, token: row?.token });
      return row?.past === true || row?.token !== claimed!.token;
    });
    expect(seen.filter((s) => s.recovered !== 0 || s.token !== claimed!.token)).toEqual([]);
    expect(other.attempts).toEqual([]);
    publisher.release();
    expect(await cycle).toMatchObject({ claimed: 1, sent: 1, lost: 0 });
    expect(await statusOf(t.db, id)).toMatchObject({ status: 'SENT', retry_count: 0, claim_count: 1 });
  });
});
