/**
 * Review 82 (outbox, hostile application values), failing on main.
 *
 * What I did: emitMany with a sparse array of events, `[event, , event]` (an array filled by
 * index, `events[i] = …`, with one index skipped), inside the application's transaction on a
 * node-postgres client after BEGIN and on a Prisma interactive transaction, as docs/outbox.md
 * shows.
 *
 * What happened: the hole is never validated. emitMany maps the events with Array.prototype.map,
 * which skips holes, so validateEnvelope never sees index 1, the envelopes array keeps the hole and
 * the insert is sent with a NULL id: PostgreSQL refuses it (`null value in column "id" of relation
 * "outbox_events" violates not-null constraint`, a plain FerryError with no `field`). Since SQL ran
 * and failed inside the application's transaction, that transaction is now aborted: its next
 * statement fails with 25P02 and the application's own writes are lost with it.
 *
 * What should happen: docs/outbox.md, Envelope: "emitMany validates all events before any SQL;
 * one invalid event inserts none", and "Anything else is a FerryValidationError". A hole is no
 * event: a FerryValidationError naming it (`events[1]` or `event`), thrown before any statement, so
 * the application's transaction stays usable (as it does for `[event, undefined]`, which is
 * refused up front). The same bug was fixed for retryMany's ids (optionChecks.ts: "Every index,
 * holes too: forEach skips a hole").
 *
 * Where: packages/core/src/outbox/emit.ts, emitMany: `events.map(...)` skips holes; iterate every
 * index (for (let i = 0; i < events.length; i++)) or refuse a hole as an invalid event.
 */
import { emitMany, FerryValidationError, type OutboxEventInput } from '@ferry/core';
import { Pool } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let t: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  t = await createTestDatabase();
  pool = listened(new Pool({ connectionString: t.url, max: 2 }));
  await pool.query('CREATE TABLE review82_orders (id int PRIMARY KEY)');
});
afterAll(async () => {
  await pool.end();
  await t.drop();
});

const event: OutboxEventInput = { type: 'order.created', payload: { orderId: 1 } };

function withHole(): OutboxEventInput[] {
  const events: OutboxEventInput[] = [];
  events[0] = event;
  events[2] = event; // index 1 never assigned: a hole
  return events;
}

describe('review82: emitMany given a sparse array', () => {
  it('refuses the hole before any SQL; the application transaction (pg) stays usable', async () => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('INSERT INTO review82_orders (id) VALUES (1)');
      const error = await emitMany(client, withHole()).catch((e: unknown) => e);
      // The application's own work goes on after a refused emit, as after any validation error.
      const after = await client
        .query('INSERT INTO review82_orders (id) VALUES (2)')
        .then(() => 'usable')
        .catch((e: unknown) => `aborted: ${(e as Error).message}`);
      await client.query('ROLLBACK');
      expect({
        validation: error instanceof FerryValidationError,
        message: (error as Error).message,
        transaction: after,
      }).toEqual({
        validation: true,
        message: expect.not.stringContaining('not-null constraint') as unknown as string,
        transaction: 'usable',
      });
    } finally {
      client.release();
    }
  });

  it('refuses the hole with FerryValidationError on Prisma too, nothing inserted', async () => {
    const before = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox_events');
    const error = await t.prisma
      .$transaction(async (tx) => {
        await emitMany(tx, withHole());
      })
      .catch((e: unknown) => e);
    const rows = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox_events');
    expect({ validation: error instanceof FerryValidationError, rows }).toEqual({
      validation: true,
      rows: before,
    });
  });
});
