import { Client } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { createEmitter, emit, emitMany, FerryValidationError, type OutboxEventInput } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

async function count(): Promise<number> {
  const [row] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox_events');
  return row?.n ?? -1;
}

describe('emit', () => {
  it('inserts in the caller’s Prisma transaction and rolls back with it', async () => {
    const before = await count();
    await expect(
      t.prisma.$transaction(async (tx) => {
        await emit(tx, { type: 'order.created', payload: { id: 1 } });
        throw new Error('business failure');
      }),
    ).rejects.toThrow('business failure');
    expect(await count()).toBe(before);
    const { id } = await t.prisma.$transaction((tx) =>
      emit(tx, { type: 'order.created', payload: { id: 2 } }),
    );
    const [row] = await t.db.query<Record<string, unknown>>(
      'SELECT status, max_retries, retry_count, event_type FROM outbox_events WHERE id = $1::uuid',
      [id],
    );
    expect(row).toEqual({ status: 'PENDING', max_retries: 5, retry_count: 0, event_type: 'order.created' });
  });

  it('stores max_retries per row at emit time (emitter option, then per-event override)', async () => {
    const emitter = createEmitter({ retry: { maxRetries: 9 } });
    const { ids } = await t.prisma.$transaction((tx) =>
      emitter.emitMany(tx, [
        { type: 'a', payload: {} },
        { type: 'b', payload: {}, maxRetries: 2 },
      ]),
    );
    const rows = await t.db.query<{ id: string; max_retries: number }>(
      'SELECT id::text AS id, max_retries FROM outbox_events WHERE id = ANY($1::uuid[])',
      [ids],
    );
    expect(Object.fromEntries(rows.map((r) => [r.id, r.max_retries]))).toEqual({
      [ids[0]!]: 9,
      [ids[1]!]: 2,
    });
  });

  it('keeps every envelope field and the insertion order of emitMany', async () => {
    const input: OutboxEventInput = {
      type: 'x',
      payload: { nested: { a: [1, 'two', null] } },
      destination: 'orders',
      orderingKey: 'k1',
      tenantId: 'tenant-a',
      correlationId: 'corr',
      causationId: 'cause',
      headers: { h: 'v' },
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      tracestate: 'vendor=1',
    };
    const { ids } = await emitMany(t.db, [input, { ...input, payload: { n: 2 } }]);
    const rows = await t.db.query<Record<string, unknown>>(
      `SELECT id::text AS id, payload, destination, ordering_key, tenant_id, correlation_id, causation_id, headers,
         traceparent, tracestate FROM outbox_events WHERE id = ANY($1::uuid[]) ORDER BY seq`,
      [ids],
    );
    expect(rows.map((r) => r.id)).toEqual(ids);
    expect(rows[0]).toMatchObject({
      payload: { nested: { a: [1, 'two', null] } },
      destination: 'orders',
      ordering_key: 'k1',
      tenant_id: 'tenant-a',
      correlation_id: 'corr',
      causation_id: 'cause',
      headers: { h: 'v' },
      tracestate: 'vendor=1',
    });
  });

  it('notifies the wake-up channel only when the transaction commits', async () => {
    const listener = listened(new Client({ connectionString: t.url }));
    await listener.connect();
    const received: string[] = [];
    listener.on('notification', (n) => received.push(n.channel));
    await listener.query('LISTEN ferry_outbox');
    await t.prisma
      .$transaction(async (tx) => {
        await emit(tx, { type: 'rolled.back', payload: {} });
        throw new Error('rollback');
      })
      .catch(() => undefined);
    await t.prisma.$transaction((tx) => emit(tx, { type: 'committed', payload: {} }));
    await listener.query('SELECT 1');
    const end = Date.now() + 5_000;
    while (received.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    expect(received).toEqual(['ferry_outbox']);
    await listener.end();
  });

  const invalid: Array<[string, unknown, string, string]> = [
    ['empty type', { type: '', payload: {} }, 'type', 'FERRY_VALIDATION_FAILED'],
    ['long type', { type: 'x'.repeat(256), payload: {} }, 'type', 'FERRY_VALIDATION_FAILED'],
    ['array payload', { type: 't', payload: [] }, 'payload', 'FERRY_VALIDATION_FAILED'],
    ['function in payload', { type: 't', payload: { f: () => 1 } }, 'payload.f', 'FERRY_VALIDATION_FAILED'],
    ['NaN in payload', { type: 't', payload: { n: Number.NaN } }, 'payload.n', 'FERRY_VALIDATION_FAILED'],
    ['bigint in payload', { type: 't', payload: { n: 1n } }, 'payload.n', 'FERRY_VALIDATION_FAILED'],
    ['too deep', { type: 't', payload: deep(40) }, 'payload' + '.d'.repeat(32), 'FERRY_VALIDATION_FAILED'],
    ['too large', { type: 't', payload: { s: 'x'.repeat(300_000) } }, 'payload', 'FERRY_PAYLOAD_TOO_LARGE'],
    [
      'non-string header',
      { type: 't', payload: {}, headers: { a: 1 } },
      'headers.a',
      'FERRY_VALIDATION_FAILED',
    ],
    [
      'huge headers',
      { type: 't', payload: {}, headers: { a: 'x'.repeat(9_000) } },
      'headers',
      'FERRY_VALIDATION_FAILED',
    ],
    [
      'bad traceparent',
      { type: 't', payload: {}, traceparent: 'nope' },
      'traceparent',
      'FERRY_VALIDATION_FAILED',
    ],
    [
      'empty ordering key',
      { type: 't', payload: {}, orderingKey: '' },
      'orderingKey',
      'FERRY_VALIDATION_FAILED',
    ],
    ['bad maxRetries', { type: 't', payload: {}, maxRetries: 0 }, 'maxRetries', 'FERRY_VALIDATION_FAILED'],
  ];
  it.each(invalid)('rejects %s before any SQL, naming the field', async (_name, event, field, code) => {
    const before = await count();
    const error = await emitMany(t.db, [{ type: 'ok', payload: {} }, event as OutboxEventInput]).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(FerryValidationError);
    expect(error).toMatchObject({ field, code });
    expect(await count()).toBe(before);
  });

  it('runs the spec’s two monitoring queries verbatim', async () => {
    await emit(t.db, { type: 'monitored', payload: {} });
    await t.db.execute(`UPDATE outbox_events SET status = 'FAILED', failed_at = now(), last_error = 'boom'`);
    const byType = await t.db.query<{
      event_type: string;
      failed_count: bigint;
    }>(`SELECT event_type, COUNT(*) AS failed_count, MAX(created_at) AS latest
FROM outbox_events
WHERE status = 'FAILED'
GROUP BY event_type
ORDER BY failed_count DESC;`);
    expect(byType.length).toBeGreaterThan(0);
    const recent = await t.db.query<{
      last_error: string;
    }>(`SELECT id, event_type, retry_count, last_error, created_at
FROM outbox_events
WHERE status = 'FAILED'
ORDER BY created_at DESC
LIMIT 20;`);
    expect(recent[0]?.last_error).toBe('boom');
  });
});

function deep(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < levels; i += 1) value = { d: value };
  return value;
}
