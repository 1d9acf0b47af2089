/**
 * A statement the relay gave up on (`statementTimeout`) may still be carried out by PostgreSQL.
 * Invariant: it never costs an event an attempt, a poison-guard count or more than a short wait.
 * A claim that commits after the relay gave up leases its rows to a token the relay dropped: the
 * relay hands those rows back (no attempt, no expired claim counted) on its next cycle, having
 * first made sure the late statement is over (on node-postgres it ends the statement's backend).
 * A completion given up on is fenced; whether it lands or not, its rows are never left leased.
 * Under onSent 'delete' the same: a deletion that lands late leaves its events gone (sent, not
 * published again); one that never lands leaves them to be published again.
 *
 * The statements are made slow on the server by a test-only trigger that waits, on a claim
 * (PENDING -> PROCESSING) or a completion (PROCESSING -> SENT, or the deletion of a PROCESSING
 * row), for an advisory lock the test holds; `statementTimeout` is small, the lease long (60 s), so no lease expires by itself.
 */
import { Pool, type PoolClient } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import {
  createRelay,
  emit,
  fromPg,
  isFerryError,
  type OnSent,
  type OutboxEvent,
  type Relay,
  type SqlExecutor,
} from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { expireLeases, silent, waitFor } from './helpers';

const CLAIM_LOCK = 4201;
const COMPLETE_LOCK = 4202;

const SLOW_TRANSITIONS = `
  CREATE FUNCTION test_slow_transition() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF OLD.status = 'PENDING' AND NEW.status = 'PROCESSING' THEN
      PERFORM pg_advisory_xact_lock_shared(${CLAIM_LOCK});
    ELSIF OLD.status = 'PROCESSING' AND NEW.status = 'SENT' THEN
      PERFORM pg_advisory_xact_lock_shared(${COMPLETE_LOCK});
    END IF;
    RETURN NEW;
  END $$;
  CREATE TRIGGER test_slow_transition BEFORE UPDATE ON outbox_events
    FOR EACH ROW EXECUTE FUNCTION test_slow_transition();
  CREATE FUNCTION test_slow_deletion() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF OLD.status = 'PROCESSING' THEN
      PERFORM pg_advisory_xact_lock_shared(${COMPLETE_LOCK});
    END IF;
    RETURN OLD;
  END $$;
  CREATE TRIGGER test_slow_deletion BEFORE DELETE ON outbox_events
    FOR EACH ROW EXECUTE FUNCTION test_slow_deletion();`;

let t: TestDatabase;
let pool: Pool;
let locker: Pool;
beforeAll(async () => {
  t = await createTestDatabase();
  await t.db.execute(SLOW_TRANSITIONS);
  pool = new Pool({ connectionString: t.url, max: 4 });
  pool.on('error', () => undefined); // connections ferry gave up on are destroyed
  locker = listened(new Pool({ connectionString: t.url, max: 1 }));
});
afterAll(async () => {
  await pool.end();
  await locker.end();
  await t.drop();
});
beforeEach(async () => {
  await t.db.execute('DELETE FROM outbox_events');
});

/** Runs `work` while the test holds advisory lock `key`, so the transition it guards waits. */
async function whileHeld<T>(key: number, work: () => Promise<T>): Promise<T> {
  const holder: PoolClient = await locker.connect();
  try {
    await holder.query('SELECT pg_advisory_lock($1)', [key]);
    return await work();
  } finally {
    await holder.query('SELECT pg_advisory_unlock($1)', [key]);
    holder.release();
  }
}

const failure = <T>(work: Promise<T>) =>
  work.then(
    () => undefined,
    (error: unknown) => error,
  );

interface Row {
  id: string;
  status: string;
  claim_token: string | null;
  claim_count: number;
  expired_claims: number;
  retry_count: number;
}

async function rows(): Promise<Row[]> {
  return t.db.query<Row>(
    `SELECT id::text AS id, status, claim_token::text AS claim_token, claim_count, expired_claims,
       retry_count FROM outbox_events ORDER BY seq`,
  );
}

/** Sessions of this database waiting on an advisory lock (a transition the test holds). */
async function advisoryWaiters(): Promise<number> {
  const [row] = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`,
  );
  return row?.n ?? 0;
}

async function emitEvents(count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) await emit(t.db, { type: 'abandoned.tick', payload: { n: i } });
}

type Kind = 'pg' | 'prisma';

function executor(kind: Kind): SqlExecutor {
  return kind === 'pg' ? fromPg(pool) : t.db;
}

function relayOn(kind: Kind, maxClaims = 10, onSent: OnSent = 'keep') {
  const publisher = new InMemoryPublisher();
  const events: OutboxEvent[] = [];
  const relay = createRelay({
    db: executor(kind),
    publisher,
    logger: silent,
    observer: (event) => void events.push(event),
    options: {
      statementTimeout: 1_000,
      lease: { duration: 60_000, heartbeatInterval: 10_000 },
      poisonGuard: { maxClaims },
      onSent,
    },
  });
  const claimedTokens = () =>
    new Set(events.flatMap((event) => (event.type === 'claimed' ? [event.claimToken] : [])));
  return { relay, publisher, claimedTokens, events };
}

/** Runs empty cycles until the relay's next cycle is number `index` (recovery runs on multiples of 10). */
async function cyclesUntil(relay: Relay, index: number): Promise<void> {
  while (relay.cycles < index) await relay.runOnce();
}

/**
 * One cycle whose claim the relay gives up on (FERRY_TIMEOUT) and that PostgreSQL commits once the
 * test lets it; returns the token the late claim leased its rows to.
 */
async function claimGivenUpOn(relay: Relay, count: number): Promise<string> {
  const error = await whileHeld(CLAIM_LOCK, () => failure(relay.runOnce()));
  expect(isFerryError(error, 'FERRY_TIMEOUT')).toBe(true);
  let token: string | null = null;
  await waitFor(async () => {
    const leased = (await rows()).filter((row) => row.status === 'PROCESSING');
    token = leased[0]?.claim_token ?? null;
    return leased.length === count;
  });
  return token as unknown as string;
}

describe.each<Kind>(['pg', 'prisma'])('a claim the relay gave up on (%s)', (kind) => {
  it('is handed back on the next cycle, its events published without a lease wait or a count', async () => {
    const { relay, publisher, claimedTokens } = relayOn(kind);
    await cyclesUntil(relay, 1); // the first cycle's lease recovery is behind us
    await emitEvents(3);
    const token = await claimGivenUpOn(relay, 3);
    // The late claim leased the rows to a token the relay dropped.
    expect(claimedTokens().has(token)).toBe(false);

    await relay.runOnce();
    await relay.close();
    expect(publisher.delivered.map((m) => m.type)).toEqual(Array(3).fill('abandoned.tick'));
    for (const row of await rows()) {
      expect(row).toMatchObject({ status: 'SENT', claim_count: 1, expired_claims: 0, retry_count: 0 });
    }
  });

  it('never fails an event by the poison guard for claims it gave up on', async () => {
    const maxClaims = 2;
    const { relay, publisher } = relayOn(kind, maxClaims);
    // Each round: a claim given up on commits late, and its lease passes before the next cycle;
    // the second round's cycle (number 10) runs lease recovery first.
    await cyclesUntil(relay, 9);
    await emitEvents(2);
    for (let round = 0; round < maxClaims; round += 1) {
      await claimGivenUpOn(relay, 2);
      await expireLeases(t.db);
    }
    await cyclesUntil(relay, 21); // past the next lease recovery (cycle 20)
    await relay.close();

    const after = await rows();
    expect(after.filter((row) => row.status === 'FAILED')).toEqual([]);
    expect(after.map((row) => row.status)).toEqual(['SENT', 'SENT']);
    expect(publisher.delivered).toHaveLength(2);
    for (const row of after) expect(row).toMatchObject({ expired_claims: 0, retry_count: 0 });
  });
});

describe('a claim the relay gave up on that still waits on the server (pg)', () => {
  it('ends its backend, so it cannot commit after its rows were handed back', async () => {
    const { relay, publisher } = relayOn('pg');
    await cyclesUntil(relay, 1);
    await emitEvents(2);
    await whileHeld(CLAIM_LOCK, async () => {
      expect(isFerryError(await failure(relay.runOnce()), 'FERRY_TIMEOUT')).toBe(true);
      // The claim given up on still waits, holding its rows; the next cycle ends its backend.
      // (Its own claim then waits too, and is given up on in turn.)
      await failure(relay.runOnce());
    });
    await waitFor(async () => (await advisoryWaiters()) === 0);
    await relay.runOnce();
    await relay.close();
    expect(publisher.delivered).toHaveLength(2);
    for (const row of await rows()) {
      expect(row).toMatchObject({ status: 'SENT', claim_count: 1, expired_claims: 0, retry_count: 0 });
    }
  });
});

/** The rows a completed cycle leaves: SENT ones, or none under onSent 'delete'. */
async function completed(onSent: OnSent): Promise<boolean> {
  const left = await rows();
  return onSent === 'delete' ? left.length === 0 : left.every((row) => row.status === 'SENT');
}

describe.each<[Kind, OnSent]>([
  ['pg', 'keep'],
  ['prisma', 'keep'],
  ['pg', 'delete'],
  ['prisma', 'delete'],
])('a completion the relay gave up on (%s, onSent %s)', (kind, onSent) => {
  it('lands fenced when PostgreSQL carries it out late', async () => {
    const { relay, publisher, events } = relayOn(kind, 10, onSent);
    await cyclesUntil(relay, 1);
    await emitEvents(2);
    const error = await whileHeld(COMPLETE_LOCK, async () => {
      const given = await failure(relay.runOnce());
      await waitFor(async () => (await advisoryWaiters()) > 0); // the completion reached the server
      return given;
    });
    expect(isFerryError(error, 'FERRY_TIMEOUT')).toBe(true);
    await waitFor(() => completed(onSent));
    await relay.runOnce();
    await relay.close();
    // Sent once: rows the late completion deleted are not published again, nor reported lost.
    expect(publisher.delivered).toHaveLength(2);
    expect(events.filter((event) => event.type === 'lease-lost')).toEqual([]);
    for (const row of await rows()) {
      expect(row).toMatchObject({ status: 'SENT', claim_token: null, expired_claims: 0, retry_count: 0 });
    }
  });

  it('leaves no row leased when it never lands: the next cycle publishes them again', async () => {
    const { relay, publisher } = relayOn(kind, 10, onSent);
    await cyclesUntil(relay, 1);
    await emitEvents(2);
    const error = await whileHeld(COMPLETE_LOCK, async () => {
      const given = await failure(relay.runOnce());
      // The completion never lands: its backend ends while it waits (once it got that far).
      await waitFor(async () => {
        const ended = await t.db.query<{ ended: boolean }>(
          `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`,
        );
        return ended.some((row) => row.ended);
      });
      return given;
    });
    expect(isFerryError(error, 'FERRY_TIMEOUT')).toBe(true);
    await waitFor(async () => {
      const left = await rows();
      return left.length === 2 && left.every((row) => row.status === 'PROCESSING');
    });

    await relay.runOnce();
    await relay.close();
    // At least once: published twice (two claims counted), the first completion lost with its backend.
    expect(publisher.delivered).toHaveLength(4);
    expect(await completed(onSent)).toBe(true);
    for (const row of await rows()) {
      expect(row).toMatchObject({ status: 'SENT', claim_count: 2, expired_claims: 0, retry_count: 0 });
    }
  });
});
