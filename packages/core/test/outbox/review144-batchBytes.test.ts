/**
 * Review 144: maxBatchBytes and payload_bytes (migration 0012) attacked as a user relying on them.
 * A claim must carry at most maxBatchBytes of payload text as the relay receives it (PostgreSQL's
 * jsonb text), always at least one row, whatever emit wrote, an older emitter left out, or SQL
 * put into payload_bytes.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createEmitter, createRelay, resolveOutboxOptions, type Publisher } from '@ferry/core';
import { relayStore } from '@ferry/core/internal/testing';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { allSent, expectBoundedCalls, payloadTextBytes, silent, summarizing, waitFor } from './helpers';

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

const MiB = 1024 * 1024;
const big = createEmitter({ limits: { maxPayloadBytes: 16 * MiB } });
let tokens = 0;
const token = () => `00000000-0000-4000-8000-${String((tokens += 1)).padStart(12, '0')}`;

async function claim(maxBytes: number, failedHead: 'block' | 'skip' = 'block'): Promise<string[]> {
  const result = await relayStore(t.db).claim({
    token: token(),
    limit: 500,
    maxBytes,
    leaseMs: 60_000,
    failedHead,
  });
  return result.rows.map((r) => r.id);
}

/** Inserts a row as SQL without emit would (another service, an older ferry), with `bytes` as its payload_bytes. */
async function insertBySql(
  payload: object,
  bytes: number | null,
  key: string | null = null,
): Promise<string> {
  const id = randomUUID();
  await t.db.execute(
    `INSERT INTO outbox_events (id, event_type, payload, ordering_key, max_retries, payload_bytes)
     VALUES ($1::uuid, 'sql', $2::jsonb, $3, 5, $4::int)`,
    [id, JSON.stringify(payload), key, bytes],
  );
  return id;
}

/** Random base64 (incompressible: stored about as large as its text), about `bytes` long. */
const noise = (n: number, bytes: number) => ({ n, blob: randomBytes((bytes * 3) / 4).toString('base64') });

describe('payload_bytes as emit writes it', () => {
  it("is the payload text's bytes as the claim returns it (PostgreSQL writes every number in plain digits)", async () => {
    const payloads = [
      { n: 0, huge: 1.7976931348623157e308, tiny: 5e-324, neg: -1.5e-7, at21: 1e21, milli: 0.000001 },
      { n: 1, list: [1e300, [], {}, [2e-300, { deep: -6.02214076e23 }]], s: 'zwölf 🚀 "\u001f\n' },
      { n: 2, when: new Date(0), empty: {} },
    ];
    await big.emitMany(
      t.db,
      payloads.map((payload) => ({ type: 'numbers', payload })),
    );
    const rows = await t.db.query<{ written: number; text: number }>(
      `SELECT payload_bytes AS written, octet_length(payload::text) AS text FROM outbox_events ORDER BY seq`,
    );
    expect(rows.map((r) => r.written)).toEqual(rows.map((r) => r.text));
  });

  it('is exact for doubles across their whole range, as emit writes them', async () => {
    // Random doubles from their bits: every exponent from 5e-324 to 1.8e308, both signs.
    const bits = new DataView(new ArrayBuffer(8));
    const values: number[] = [];
    while (values.length < 2_000) {
      bits.setUint32(0, randomBytes(4).readUInt32BE(0));
      bits.setUint32(4, randomBytes(4).readUInt32BE(0));
      const value = bits.getFloat64(0);
      if (Number.isFinite(value) && !Number.isInteger(value)) values.push(value);
    }
    values.push(1e21, 1e-7, 0.000001, 123e-20, -5e-324, 1.5e300);
    const { ids } = await big.emitMany(
      t.db,
      values.map((v, n) => ({ type: 'double', payload: { n, v, list: [v, -v] } })),
    );
    const wrong = await t.db.query<{ id: string }>(
      `SELECT id::text AS id FROM outbox_events
       WHERE id = ANY ($1::uuid[]) AND payload_bytes IS DISTINCT FROM octet_length(payload::text)`,
      [ids],
    );
    expect(wrong).toEqual([]);
  });

  it('bounds a claim of float-laden payloads by the text the relay receives, not the shorter JSON emit wrote', async () => {
    // 3,000 × 1e308: emit writes `1e+308` (7 bytes with its comma), PostgreSQL 309 digits and ", ".
    await big.emitMany(
      t.db,
      Array.from({ length: 6 }, (_, n) => ({ type: 'floats', payload: { n, v: Array(3_000).fill(1e308) } })),
    );
    const sizes = await payloadTextBytes(t.db);
    const ids = await claim(2 * MiB);
    const carried = ids.reduce((sum, id) => sum + (sizes.get(id) ?? 0), 0);
    expect({ rows: ids.length, carried: carried <= 2 * MiB }).toEqual({ rows: 2, carried: true });
  });
});

describe('payload_bytes written by SQL', () => {
  it('a negative value does not open the bound to the rows after it', async () => {
    const small = await insertBySql({ n: 0 }, -2_147_483_648);
    const later = [];
    for (let n = 1; n <= 4; n += 1) later.push(await insertBySql(noise(n, MiB), null));
    // Counted at its stored size, the negative row takes its place; two 1 MiB rows fit in 2.5 MiB.
    expect(await claim(2.5 * MiB)).toEqual([small, ...later.slice(0, 2)]);
  });

  it('a negative value after a row over the bound does not let later rows join that row', async () => {
    const over = await insertBySql(noise(0, 3 * MiB), null);
    await insertBySql({ n: 1 }, -2_147_483_648);
    await insertBySql(noise(2, MiB), null);
    expect(await claim(2 * MiB)).toEqual([over]);
  });

  it('a value lying small (0) counts the stored size: a claim of uncompressed payloads stays within the bound', async () => {
    for (let n = 0; n < 5; n += 1) await insertBySql(noise(n, MiB), n % 2 === 0 ? 0 : 1);
    const sizes = await payloadTextBytes(t.db);
    const ids = await claim(2.5 * MiB, 'skip');
    const carried = ids.reduce((sum, id) => sum + (sizes.get(id) ?? 0), 0);
    expect({ rows: ids.length, within: carried <= 2.5 * MiB }).toEqual({ rows: 2, within: true });
  });

  it('a huge value goes alone and does not stall the rows behind it', async () => {
    const liar = await insertBySql({ n: 0 }, 2_147_483_647);
    const behind = [await insertBySql({ n: 1 }, null), await insertBySql({ n: 2 }, 10)];
    expect(await claim(MiB)).toEqual([liar]);
    expect(await claim(MiB)).toEqual(behind);
  });
});

describe('maxBatchBytes refusals', () => {
  it.each([0, -1, Number.NaN, Infinity, -Infinity, 1.5, 2 ** 53, '67108864', 64n, null, true])(
    'refuses %p with FERRY_CONFIG_INVALID naming maxBatchBytes',
    (value) => {
      expect(() => resolveOutboxOptions({ maxBatchBytes: value as number })).toThrow(
        expect.objectContaining({
          code: 'FERRY_CONFIG_INVALID',
          message: expect.stringContaining('maxBatchBytes'),
        }),
      );
    },
  );

  it('takes a bound above 2^31 (a bigint parameter) and claims by it', async () => {
    expect(resolveOutboxOptions({ maxBatchBytes: 2 ** 40 }).maxBatchBytes).toBe(2 ** 40);
    const { ids } = await big.emitMany(
      t.db,
      [0, 1, 2].map((n) => ({ type: 'small', payload: { n } })),
    );
    expect(await claim(2 ** 40)).toEqual(ids);
  });
});

describe('a claim full by bytes', () => {
  it('is pipelined like one full by count: the next claim goes out while it publishes', async () => {
    await big.emitMany(
      t.db,
      Array.from({ length: 6 }, (_, n) => ({ type: 'big', payload: { n, blob: 'x'.repeat(MiB - 100) } })),
    );
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let inFlight = 0;
    let maxInFlight = 0;
    const inner = new InMemoryPublisher();
    const publisher: Publisher = {
      publish: async (messages, signal) => {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await gate;
        inFlight -= 1;
        return inner.publish(messages, signal);
      },
    };
    // Two rows fill a claim by bytes; batchSize (500) is never reached.
    const relay = createRelay({
      db: t.db,
      publisher,
      logger: silent,
      options: { maxBatchBytes: 2 * MiB, pipelineDepth: 2, pollInterval: 20 },
    });
    relay.start();
    try {
      await waitFor(() => inFlight === 2, 10_000).catch(() => undefined);
      open();
      await waitFor(() => allSent(t.db));
    } finally {
      open();
      await relay.close();
    }
    expect(maxInFlight).toBe(2);
  });
});

// 1 MiB events under a 2 MiB bound: two rows fill a claim, as 16 MiB ones under 32 MiB did at 16
// times the bytes (128 MiB through emit, PostgreSQL and the relay for the same claims).
describe('two relays on a backlog of 1 MiB events', () => {
  it('claim within the bound each, never the same row twice, send every row, keys in order', async () => {
    const bound = 2 * MiB;
    const events = Array.from({ length: 8 }, (_, n) => ({
      type: 'huge',
      payload: { n, blob: 'x'.repeat(MiB - 64) },
      orderingKey: n < 4 ? undefined : n % 2 === 0 ? 'a' : 'b',
    }));
    for (const event of events) await big.emit(t.db, event);
    const sizes = await payloadTextBytes(t.db);
    const { publisher, calls } = summarizing();
    const relays = [0, 1].map(() => {
      return createRelay({
        db: t.db,
        publisher,
        logger: silent,
        options: { maxBatchBytes: bound, pipelineDepth: 2, pollInterval: 20 },
      });
    });
    for (const relay of relays) relay.start();
    try {
      await waitFor(() => allSent(t.db), 60_000);
    } finally {
      await Promise.all(relays.map((relay) => relay.close()));
    }
    expectBoundedCalls(calls, sizes, bound, 8);
  });
});
