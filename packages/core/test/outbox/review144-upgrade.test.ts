/**
 * Review 144: migration 0012 (payload_bytes) applied while an emitter of the previous version
 * (which writes no payload_bytes) keeps writing, before, during and after it; then a relay of
 * this version drains both kinds of rows within maxBatchBytes.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { createEmitter, createRelay, fromPg, migrate } from '@ferry/core';
import { listened } from '../../../../test-support/oneStatement';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { allSent, expectBoundedCalls, payloadTextBytes, silent, summarizing, waitFor } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await t.db.execute('ALTER TABLE outbox_events DROP COLUMN payload_bytes');
  await t.db.execute("DELETE FROM ferry_schema_migrations WHERE name = '0012_outbox_payload_bytes'");
});
afterAll(async () => {
  await t.drop();
});

const MiB = 1024 * 1024;
const BOUND = 3 * MiB;

/** An emitter of the previous version: its INSERT names no payload_bytes. */
const OLD_INSERT = `INSERT INTO outbox_events (id, event_type, payload, ordering_key, max_retries)
  VALUES ($1::uuid, 'old', $2::jsonb, $3, 5)`;
/** About 1 MiB of random base64 (stored uncompressed, about as large as its text). */
const payload = (n: number) => JSON.stringify({ n, blob: randomBytes((3 * MiB) / 4).toString('base64') });

async function connected(): Promise<pg.Client> {
  const c = listened(new pg.Client({ connectionString: t.url }));
  await c.connect();
  return c;
}

it('an older emitter writing across the upgrade: its rows and the new ones are all relayed, each claim within the bound, keys in order', async () => {
  const emitter = createEmitter({ limits: { maxPayloadBytes: 16 * MiB } });
  // Before 0012 this version's emit fails, naming the missing column and the command that adds
  // it, and writes nothing.
  const refused = emitter.emit(t.db, { type: 'new', payload: { n: -1 } });
  await expect(refused).rejects.toMatchObject({
    code: 'FERRY_SCHEMA_NOT_READY',
    message: expect.stringContaining('payload_bytes'),
  });
  await expect(refused).rejects.toThrow('run `ferry migrate`');
  const old = await connected();
  const pool = listened(new pg.Pool({ connectionString: t.url, max: 2 }));
  let n = 0;
  try {
    await old.query(OLD_INSERT, [randomUUID(), payload(n++), 'k']);
    // The old emitter's transaction is open while the migrator starts: the migrator waits for it.
    await old.query('BEGIN');
    await old.query(OLD_INSERT, [randomUUID(), payload(n++), 'k']);
    let applied = false;
    const migrating = migrate(fromPg(pool), { timeoutMs: 60_000 }).then((result) => {
      applied = true;
      return result;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(applied).toBe(false);
    await old.query(OLD_INSERT, [randomUUID(), payload(n++), null]);
    await old.query('COMMIT');
    expect((await migrating).applied).toEqual(['0012_outbox_payload_bytes']);
    // After it: the old emitter goes on (payload_bytes null), this version's writes it.
    await old.query(OLD_INSERT, [randomUUID(), payload(n++), 'k']);
    for (let i = 0; i < 3; i += 1) {
      await emitter.emit(t.db, {
        type: 'new',
        payload: { n: n++, blob: randomBytes((3 * MiB) / 4).toString('base64') },
        orderingKey: i === 1 ? undefined : 'k',
      });
    }
    await old.query(OLD_INSERT, [randomUUID(), payload(n++), 'k']);
  } finally {
    await Promise.all([old.end(), pool.end()]);
  }
  const [nulls] = await t.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM outbox_events WHERE payload_bytes IS NULL',
  );
  expect(nulls?.n).toBe(5);
  const sizes = await payloadTextBytes(t.db);
  const { publisher, calls } = summarizing();
  const relay = createRelay({ db: t.db, publisher, logger: silent, options: { maxBatchBytes: BOUND } });
  await relay.verify();
  try {
    await waitFor(async () => {
      await relay.runOnce();
      return allSent(t.db);
    });
  } finally {
    await relay.close();
  }
  expectBoundedCalls(calls, sizes, BOUND, n);
});

it("the README's backfill of payload_bytes counts older events exactly, batch by batch", async () => {
  const readme = readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');
  const statement = /`(UPDATE outbox_events SET payload_bytes = [^`]+)`/.exec(readme)?.[1];
  expect(statement).toBeDefined();
  await t.db.execute('DELETE FROM outbox_events');
  await t.db.execute(
    `INSERT INTO outbox_events (id, event_type, payload, max_retries)
     SELECT gen_random_uuid(), 'old', jsonb_build_object('n', g, 'x', jsonb_build_array(1e300, 'é')), 5
     FROM generate_series(1, 2500) g`,
  );
  const [{ max } = { max: 0 }] = await t.db.query<{ max: number }>(
    'SELECT max(seq)::int AS max FROM outbox_events',
  );
  for (let from = 0; from < max; from += 1_000)
    await t.db.execute((statement as string).replaceAll(':from', String(from)));
  const wrong = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox_events WHERE payload_bytes IS DISTINCT FROM octet_length(payload::text)`,
  );
  expect(wrong).toEqual([{ n: 0 }]);
});
