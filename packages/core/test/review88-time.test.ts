/**
 * Review 88 (time): a timestamp column holding a value no JavaScript Date holds, failing on main.
 *
 * What I did: PostgreSQL's timestamptz takes 'infinity', '-infinity' and the years 4713 BC to
 * 294276 AD; a JavaScript Date holds ±8.64e15 ms around 1970 (about 271821 BC to 275760 AD). An
 * operator or a migration sets a row's times by SQL (created_at, next_attempt_at, updated_at, an
 * inbox receipt's completed_at / dead_at, the audit trail's at); the same rows are then read
 * through each of the executors ferry takes (Prisma, node-postgres, Kysely): the outbox's admin
 * get / list, the relay's claim (the publisher's message), the inbox's admin get / list / stats /
 * requeue / replay, a worker's claim (the handler's receipt) and the audit log.
 *
 * What happened: node-postgres and Kysely read 'infinity' as the number Infinity (the mapper made
 * it an Invalid Date) and a year past 275760 as an Invalid Date; Prisma reads every one of them,
 * and also any year past 9999 or BC, as an Invalid Date. Records carried Invalid Dates (toISOString
 * throws a RangeError, JSON writes null, comparisons are all false), the publisher's message too
 * (RabbitMQ's timestamp property NaN), and the inbox's stats an Invalid oldestPendingAt.
 *
 * What should happen: every Date ferry returns is a valid Date: a time a Date holds is that time
 * (whatever the driver), one beyond the Date range (±infinity included) is the nearest end of it.
 */
import { randomUUID } from 'node:crypto';
import { Kysely, PostgresDialect } from 'kysely';
import { Pool } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import {
  createAuditLog,
  createOutboxAdmin,
  createRelay,
  emit,
  fromPg,
  InboxAdmin,
  type SqlExecutor,
} from '@ferry/core';
import { fromKysely } from '@ferry/core/kysely';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { silent } from './outbox/helpers';
import { makeInbox, message } from './inbox/helpers';
import { claimReceipts } from '../src/inbox/sql/claim';

/** The ends of a JavaScript Date's range (ECMA-262 21.4.1.22: ±8.64e15 ms). */
const MAX = 8.64e15;
const MIN = -8.64e15;

/** Times a timestamptz holds, each with the Date (in ms) every read of it should give. */
const ODD_TIMES: Array<[string, number]> = [
  ['infinity', MAX],
  ['-infinity', MIN],
  ['294276-12-31 23:59:59.999999+00', MAX],
  ['275760-09-13 00:00:00.001+00', MAX],
  ['20000-01-01 00:00:00+00', Date.UTC(20000, 0, 1)],
  ['4713-01-01 00:00:00+00 BC', -210863520000000],
  // 1 BC is ISO year 0; the microseconds are cut to the millisecond a Date holds.
  ['0001-01-01 00:00:00.123456+00 BC', new Date('0000-01-01T00:00:00.123Z').getTime()],
];

let t: TestDatabase;
let pool: Pool;
let kysely: Kysely<unknown>;
const executors: Record<string, () => SqlExecutor> = {
  prisma: () => t.db,
  pg: () => fromPg(pool),
  kysely: () => fromKysely(kysely),
};

beforeAll(async () => {
  t = await createTestDatabase();
  pool = listened(new Pool({ connectionString: t.url, max: 3 }));
  kysely = new Kysely<unknown>({
    dialect: new PostgresDialect({ pool: listened(new Pool({ connectionString: t.url, max: 3 })) }),
  });
});
afterAll(async () => {
  await pool.end();
  await kysely.destroy();
  await t.drop();
});

/** Every Date in `value` (own fields, one level of nesting): [path, ms]. */
function datesOf(value: object, path = ''): Array<[string, number]> {
  return Object.entries(value).flatMap(([key, field]): Array<[string, number]> => {
    if (field instanceof Date) return [[`${path}${key}`, field.getTime()]];
    if (field !== null && typeof field === 'object' && !Array.isArray(field) && path === '') {
      return datesOf(field as object, `${key}.`);
    }
    return [];
  });
}

/** The Dates of `value` that are no valid Date (NaN time). */
function invalidDates(value: object): string[] {
  return datesOf(value)
    .filter(([, ms]) => Number.isNaN(ms))
    .map(([path]) => path);
}

describe.each(Object.keys(executors))('read through %s', (adapter) => {
  describe.each(ODD_TIMES)('a time of %s', (time, expected) => {
    it('outbox: get, list and the claimed message carry it as a valid Date', async () => {
      const db = executors[adapter]!();
      await t.db.execute('DELETE FROM outbox_events');
      const { id } = await emit(t.db, { type: 'odd', payload: {} });
      await t.db.execute(
        `UPDATE outbox_events SET created_at = $2::timestamptz, updated_at = $2::timestamptz WHERE id = $1::uuid`,
        [id, time],
      );
      const admin = createOutboxAdmin(db);
      const got = await admin.get(id);
      expect({ invalid: invalidDates(got!), createdAt: got?.createdAt.getTime() }).toEqual({
        invalid: [],
        createdAt: expected,
      });
      expect(got?.updatedAt.getTime()).toBe(expected);
      // A time the row does not have is still none.
      expect([got?.publishedAt, got?.failedAt, got?.leaseExpiresAt]).toEqual([null, null, null]);
      const listed = await admin.list({ limit: 10 });
      expect(listed.items.map((item) => item.createdAt.getTime())).toEqual([expected]);

      const stats = await admin.stats();
      expect(Number.isFinite(stats.oldestPendingAgeMs)).toBe(true);

      const publisher = new InMemoryPublisher({ decide: () => 'sent' });
      const ages: number[] = [];
      const r = createRelay({
        db,
        publisher,
        logger: silent,
        observer: (event) => {
          if (event.type === 'sent') ages.push(event.ageMs);
        },
      });
      try {
        expect(await r.runOnce()).toMatchObject({ claimed: 1, sent: 1 });
      } finally {
        await r.close();
      }
      expect(publisher.attempts.map((m) => m.createdAt.getTime())).toEqual([expected]);
      // The age is from that Date to now: finite (JSON has no Infinity), as stats' is.
      expect(ages.map((age) => Number.isFinite(age))).toEqual([true]);
    });

    it('inbox: get, list, stats, a claim, requeue, replay and the audit log carry it as a valid Date', async () => {
      const db = executors[adapter]!();
      const tenant = `time-${randomUUID()}`;
      const consumer = `c-${randomUUID().slice(0, 8)}`;
      const inbox = makeInbox(t.prisma, { handlers: { [consumer]: async () => undefined } });
      const { id } = (await inbox.accept(message({ consumer, tenantId: tenant }))).record;
      await t.db.execute(
        `UPDATE ferry_inbox_receipts SET created_at = $2::timestamptz, updated_at = $2::timestamptz,
           next_attempt_at = least($2::timestamptz, now()) WHERE id = $1::uuid`,
        [id, time],
      );
      const admin = new InboxAdmin(db).forTenant(tenant);
      const got = await admin.get(id);
      expect({ invalid: invalidDates(got!), createdAt: got?.createdAt.getTime() }).toEqual({
        invalid: [],
        createdAt: expected,
      });
      const listed = await admin.list({});
      expect(listed.records.map((record) => record.createdAt.getTime())).toEqual([expected]);
      const stats = await admin.stats();
      expect(stats.oldestPendingAt?.getTime()).toBe(expected);

      const [claimed] = await claimReceipts(db, [consumer], 1, 60_000, 5);
      expect({ invalid: invalidDates(claimed!), createdAt: claimed?.createdAt.getTime() }).toEqual({
        invalid: [],
        createdAt: expected,
      });

      // DEAD since the odd time, then requeued: the answer is read back from the row.
      await t.db.execute(
        `UPDATE ferry_inbox_receipts SET status = 'DEAD', claim_token = NULL, lease_expires_at = NULL,
           dead_at = $2::timestamptz, last_error = 'x' WHERE id = $1::uuid`,
        [id, time],
      );
      const dead = await admin.get(id);
      expect(dead?.deadAt?.getTime()).toBe(expected);
      expect([dead?.completedAt, dead?.leaseExpiresAt, dead?.replay]).toEqual([null, null, null]);
      expect((await admin.stats()).oldestPendingAt).toBeNull();
      const requeued = await admin.requeue({
        id,
        expectedVersion: dead!.rowVersion,
        reason: 'time',
        actor: 'ops@test',
      });
      expect({ invalid: invalidDates(requeued), createdAt: requeued.createdAt.getTime() }).toEqual({
        invalid: [],
        createdAt: expected,
      });

      // COMPLETED at the odd time, replayed twice: the duplicate's record is read from its row.
      await t.db.execute(
        `UPDATE ferry_inbox_receipts SET status = 'COMPLETED', completed_at = $2::timestamptz,
           claim_token = NULL, lease_expires_at = NULL WHERE id = $1::uuid`,
        [id, time],
      );
      const completed = await admin.get(id);
      expect(completed?.completedAt?.getTime()).toBe(expected);
      const request = {
        id,
        expectedVersion: completed!.rowVersion,
        requestId: randomUUID(),
        targetConsumer: consumer,
        actor: 'ops@test',
        reason: 'time',
      };
      const first = await admin.replay(request);
      await t.db.execute(
        `UPDATE ferry_inbox_receipts SET created_at = $2::timestamptz, replay_requested_at = $2::timestamptz
           WHERE id = $1::uuid`,
        [first.record.id, time],
      );
      const again = await admin.replay(request);
      expect(again.kind).toBe('duplicate');
      expect({
        invalid: invalidDates(again.record),
        requestedAt: again.record.replay?.requestedAt.getTime(),
      }).toEqual({ invalid: [], requestedAt: expected });

      await t.db.execute(`UPDATE ferry_operator_audit SET at = $1::timestamptz WHERE scope = $2`, [
        time,
        `tenant:${tenant}`,
      ]);
      const trail = await createAuditLog(db).list({ tenantId: tenant });
      expect(trail.items.length).toBeGreaterThan(0);
      expect(trail.items.map((entry) => entry.at.getTime())).toEqual(trail.items.map(() => expected));
      await inbox.close();
    });
  });
});
