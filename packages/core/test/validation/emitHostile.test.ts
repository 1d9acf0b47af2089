import {
  createEmitter,
  emit,
  emitMany,
  FerryConfigError,
  FerryValidationError,
  type OutboxEventInput,
} from '@ferry/core';
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

const NUL = 'a\u0000b';
const LONE_HIGH = 'a\ud800b';
const LONE_LOW = '\udc00';
const ok = { type: 't', payload: {} };
/** A Date passes the payload walk as a Date; what it serializes to is up to its toJSON. */
const dateSaying = (json: unknown): Date => Object.assign(new Date(0), { toJSON: () => json });

describe('emit refuses what PostgreSQL would reject or silently alter', () => {
  const hostile: Array<[string, Partial<OutboxEventInput> & Record<string, unknown>, string, string]> = [
    ['NUL in a payload string', { payload: { s: NUL } }, 'payload.s', 'invalid_text'],
    [
      'NUL in a nested payload key',
      { payload: { a: [{ [NUL]: 1 }] } },
      'payload.a[0].a\\u0000b',
      'invalid_text',
    ],
    ['a lone high surrogate in a payload string', { payload: { s: LONE_HIGH } }, 'payload.s', 'invalid_text'],
    [
      'a lone low surrogate in a payload key',
      { payload: { [LONE_LOW]: 1 } },
      'payload.\\udc00',
      'invalid_text',
    ],
    ['a Date that serializes with NUL', { payload: { at: dateSaying(NUL) } }, 'payload.at', 'invalid_text'],
    [
      'a Date that serializes to a lone surrogate key',
      { payload: { at: [dateSaying({ [LONE_LOW]: 1 })] } },
      'payload.at[0].\\udc00',
      'invalid_text',
    ],
    [
      'a Date whose toJSON returns undefined (JSON leaves it out)',
      { payload: { at: dateSaying(undefined) } },
      'payload.at',
      'inbox_invalid',
    ],
    ['a Date whose toJSON returns -0', { payload: { at: dateSaying(-0) } }, 'payload.at', 'inbox_invalid'],
    [
      'a Date whose toJSON returns a Date',
      { payload: { at: dateSaying(new Date(0)) } },
      'payload.at',
      'inbox_invalid',
    ],
    ['a lone surrogate in the type', { type: LONE_HIGH }, 'type', 'invalid_text'],
    ['NUL in the type', { type: NUL }, 'type', 'invalid_text'],
    ['NUL in the ordering key', { orderingKey: NUL }, 'orderingKey', 'invalid_text'],
    ['a lone surrogate in the destination', { destination: LONE_LOW }, 'destination', 'invalid_text'],
    ['NUL in the tenant', { tenantId: NUL }, 'tenantId', 'invalid_text'],
    // Tenants a ferry consumer dead-letters as tenant_unresolved (resolveTenant, identifierFault).
    ['a whitespace-only tenant', { tenantId: '  ' }, 'tenantId', 'inbox_invalid'],
    ['a tenant of a zero-width space', { tenantId: '\u200b' }, 'tenantId', 'inbox_invalid'],
    ['a tab in the tenant', { tenantId: 'acme\tcorp' }, 'tenantId', 'inbox_invalid'],
    ['a line separator in the tenant', { tenantId: 'acme\u2028corp' }, 'tenantId', 'inbox_invalid'],
    ['NUL in the correlation id', { correlationId: NUL }, 'correlationId', 'invalid_text'],
    ['a lone surrogate in the causation id', { causationId: LONE_HIGH }, 'causationId', 'invalid_text'],
    ['NUL in the tracestate', { tracestate: `k=${NUL}` }, 'tracestate', 'invalid_text'],
    ['NUL in a header value', { headers: { a: NUL } }, 'headers.a', 'invalid_text'],
    [
      'a lone surrogate in a header name',
      { headers: { [LONE_HIGH]: 'v' } },
      'headers.a\\ud800b',
      'invalid_text',
    ],
    [
      'a reserved x-ferry-* header',
      { headers: { 'x-ferry-tenant-id': 'victim' } },
      'headers.x-ferry-tenant-id',
      'reserved_header',
    ],
    [
      'a reserved header in another case',
      { headers: { 'X-Ferry-Message-Id': 'forged' } },
      'headers.X-Ferry-Message-Id',
      'reserved_header',
    ],
    ['negative zero (JSON writes 0)', { payload: { n: [1, -0] } }, 'payload.n[1]', 'inbox_invalid'],
    ['an integer beyond 2^53-1', { payload: { id: 2 ** 53 } }, 'payload.id', 'inbox_invalid'],
    ['an integer JSON writes as 21 digits', { payload: { id: -1e20 } }, 'payload.id', 'inbox_invalid'],
    ['NaN', { payload: { n: Number.NaN } }, 'payload.n', 'inbox_invalid'],
    ['Infinity', { payload: { n: [Infinity] } }, 'payload.n[0]', 'inbox_invalid'],
    ['a BigInt', { payload: { n: 10n } }, 'payload.n', 'inbox_invalid'],
    ['undefined (JSON leaves it out)', { payload: { u: undefined } }, 'payload.u', 'inbox_invalid'],
    // eslint-disable-next-line no-sparse-arrays
    ['a sparse array (JSON writes null)', { payload: { a: [1, , 3] } }, 'payload.a[1]', 'inbox_invalid'],
    [
      'an invalid Date (JSON writes null)',
      { payload: { at: new Date(Number.NaN) } },
      'payload.at',
      'inbox_invalid',
    ],
    [
      'a symbol key (JSON leaves it out)',
      { payload: { o: { [Symbol('s')]: 1 } } },
      'payload.o',
      'inbox_invalid',
    ],
    ['a toJSON method', { payload: { o: { toJSON: () => 1 } } }, 'payload.o.toJSON', 'inbox_invalid'],
    [
      'traceparent as a plain header',
      { headers: { traceparent: '00-0-0-00' } },
      'headers.traceparent',
      'reserved_header',
    ],
    [
      'tracestate as a plain header',
      { headers: { TraceState: 'k=v' } },
      'headers.TraceState',
      'reserved_header',
    ],
  ];

  it.each(hostile)(
    'rejects %s with a validation error before any SQL',
    async (_name, overrides, field, rule) => {
      const before = await count();
      const error = await emitMany(t.db, [ok, { ...ok, ...overrides } as OutboxEventInput]).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(FerryValidationError);
      expect(error).toMatchObject({
        code: 'FERRY_VALIDATION_FAILED',
        retriable: false,
        field,
        ...(rule === 'inbox_invalid' ? {} : { details: { rule } }),
      });
      expect(await count()).toBe(before);
    },
  );

  it('keeps well-formed astral characters and escapes exactly', async () => {
    const event = {
      type: 'order.🚚',
      payload: { '😀': ['\ud83d\ude00', 'é', '\\u0000', '\t\n'] },
      orderingKey: 'ключ-🔑',
      headers: { 'x-app-émoji': '🎉' },
    };
    const { id } = await emit(t.db, event);
    const [row] = await t.db.query<Record<string, unknown>>(
      `SELECT event_type AS type, payload, ordering_key AS "orderingKey", headers FROM outbox_events WHERE id = $1::uuid`,
      [id],
    );
    expect(row).toEqual(event);
  });

  it('keeps numbers JSON writes exactly: safe integers, floats, 1e21 and beyond, Dates as ISO text', async () => {
    const at = new Date('2026-01-02T03:04:05.678Z');
    const payload = { max: 2 ** 53 - 1, min: -(2 ** 53 - 1), f: 0.1 + 0.2, big: 1e21, tiny: 5e-324, at };
    const { id } = await emit(t.db, { type: 't', payload });
    const [row] = await t.db.query<{ payload: unknown }>(
      'SELECT payload FROM outbox_events WHERE id = $1::uuid',
      [id],
    );
    expect(row!.payload).toEqual({ ...payload, at: at.toISOString() });
  });

  it('refuses limits above the schema bounds as configuration errors', () => {
    for (const [name, value] of [
      ['maxTypeLength', 256],
      ['maxIdLength', 100_000],
      ['maxPayloadDepth', 100_000],
    ] as const) {
      expect(() => createEmitter({ limits: { [name]: value } })).toThrow(FerryConfigError);
      expect(() => createEmitter({ limits: { [name]: value } })).toThrow(`limits.${name}`);
    }
    expect(() => createEmitter({ limits: { maxTypeLength: 255 } })).not.toThrow();
  });
});

it('refuses as tx an executor without transaction(), naming it, before any statement', async () => {
  const notReached = () => Promise.reject(new Error('no statement should be sent'));
  const noTransaction = { inTransaction: false, query: notReached, execute: notReached };
  const error = await emit(noTransaction as never, ok).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(FerryValidationError);
  expect(error).toMatchObject({ field: 'tx', message: expect.stringContaining('missing transaction()') });
});
