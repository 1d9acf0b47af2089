/**
 * emit stores the JSON text its checks wrote (validate/json.ts, jsonText), never a second
 * serialization of the application's object; a payload over maxPayloadBytes is refused as such
 * however it is built (review82-checkedNotStored, review82-hugePayload).
 */
import { createEmitter, emit, FerryValidationError, type OutboxEventInput } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

async function stored(event: OutboxEventInput): Promise<{ payload: string; headers: string } | string> {
  try {
    const { id } = await emit(t.db, event);
    const [row] = await t.db.query<{ payload: string; headers: string }>(
      'SELECT payload::text AS payload, headers::text AS headers FROM outbox_events WHERE id = $1::uuid',
      [id],
    );
    return row!;
  } catch (error) {
    if (!(error instanceof FerryValidationError)) throw error;
    return `${error.code} ${error.field}: ${error.reason}`;
  }
}

describe('what emit stores is what it checked', () => {
  it('an ordinary payload is stored as JSON.stringify writes it (Dates as ISO strings)', async () => {
    const payload = {
      a: [1, 'two', null, true, { b: 2.5 }],
      at: new Date('2026-01-02T03:04:05.678Z'),
      'k"\\': 'é😀',
    };
    const row = await stored({ type: 'x', payload });
    const [roundTrip] = await t.db.query<{ p: string }>('SELECT $1::jsonb::text AS p', [
      JSON.stringify(payload),
    ]);
    expect(row).toMatchObject({ payload: roundTrip!.p });
  });

  it('a header answering differently when read again is stored as it was checked', async () => {
    let reads = 0;
    const headers = {
      get 'x-app'(): string {
        reads += 1;
        return reads === 1 ? 'checked' : 'x'.repeat(100_000);
      },
    };
    expect(await stored({ type: 'x', payload: {}, headers })).toMatchObject({
      headers: '{"x-app": "checked"}',
    });
  });

  it('a Date whose own toJSON returns null is refused, not stored as null', async () => {
    const at = new Date();
    Object.defineProperty(at, 'toJSON', { value: () => null });
    expect(await stored({ type: 'x', payload: { at } })).toBe(
      'FERRY_VALIDATION_FAILED payload.at: an invalid Date is not JSON',
    );
  });

  it('an array with a non-index key past its elements is refused naming it', async () => {
    const list = Object.assign([1, 2], { extra: 'dropped by JSON' });
    expect(await stored({ type: 'x', payload: { list } })).toMatch(
      /^FERRY_VALIDATION_FAILED payload\.list\.extra: /,
    );
  });
});

describe('a payload over maxPayloadBytes', () => {
  const small = createEmitter({ limits: { maxPayloadBytes: 1_000 } });
  const refusal = (payload: Record<string, unknown>) =>
    small.emit(t.db, { type: 'x', payload }).then(
      () => 'stored',
      (e: unknown) => {
        const { code, field, details } = e as FerryValidationError;
        return { code, field, rule: details.rule };
      },
    );
  const tooLarge = { code: 'FERRY_PAYLOAD_TOO_LARGE', field: 'payload', rule: 'payload_too_large' };

  it('made of many small members is refused as too large (the walk stops at the limit)', async () => {
    const payload = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i]));
    expect(await refusal(payload)).toEqual(tooLarge);
  });

  it('whose characters fit but whose UTF-8 bytes do not is refused as too large', async () => {
    expect(await refusal({ s: 'é'.repeat(600) })).toEqual(tooLarge);
  });

  it('too large before a later fault is refused as too large, the walk stopping there', async () => {
    expect(await refusal({ s: 'a'.repeat(2_000), late: undefined })).toEqual(tooLarge);
  });

  it('exactly at the limit is stored', async () => {
    // {"s":"…"} is 8 characters besides the string.
    expect(await refusal({ s: 'a'.repeat(992) })).toBe('stored');
  });
});
