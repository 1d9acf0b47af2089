import { INBOX_INPUT_LIMITS, isFerryError, FerryValidationError, type InboxAcceptInput } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message } from '../inbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < levels; i += 1) value = { d: value };
  return value;
}

const NUL = 'a\u0000b';
const LONE = 'x\udfffy';

/** A Date passes the payload walk as a Date; what it serializes to is up to its toJSON. */
const dateSaying = (json: unknown): Date => Object.assign(new Date(0), { toJSON: () => json });

describe('acceptance refuses hostile input per message, never as a database failure', () => {
  const hostile: Array<[string, Record<string, unknown>, string]> = [
    ['NUL in a payload string', { payload: { s: NUL } }, 'invalid_text'],
    ['NUL in a payload key', { payload: { nested: { [NUL]: true } } }, 'invalid_text'],
    ['a lone surrogate in a payload string', { payload: { list: [LONE] } }, 'invalid_text'],
    ['a lone surrogate in the message id', { messageId: `m-${LONE}` }, 'invalid_text'],
    ['NUL in the consumer', { consumer: NUL }, 'invalid_text'],
    ['NUL in the tenant', { tenantId: NUL }, 'invalid_text'],
    ['a lone surrogate in the type', { type: LONE }, 'invalid_text'],
    ['NUL in a header value', { headers: { h: NUL } }, 'invalid_text'],
    ['a lone surrogate in a header name', { headers: { [LONE]: 'v' } }, 'invalid_text'],
    [
      'too many headers',
      {
        headers: Object.fromEntries(
          Array.from({ length: INBOX_INPUT_LIMITS.maxHeaders + 1 }, (_, i) => [`h${i}`, 'v']),
        ),
      },
      'headers_too_large',
    ],
    [
      'headers over the byte limit',
      { headers: { big: 'x'.repeat(INBOX_INPUT_LIMITS.maxHeaderBytes) } },
      'headers_too_large',
    ],
    [
      'a payload nested too deep',
      { payload: nested(INBOX_INPUT_LIMITS.maxPayloadDepth) },
      'payload_too_deep',
    ],
    ['a payload nested far too deep', { payload: nested(100_000) }, 'payload_too_deep'],
    ['a Date that serializes with NUL', { payload: { at: dateSaying(NUL) } }, 'invalid_text'],
    ['a Date that serializes with a lone surrogate', { payload: { at: [dateSaying(LONE)] } }, 'invalid_text'],
    ['a Date that serializes to a NUL key', { payload: { at: dateSaying({ [NUL]: 1 }) } }, 'invalid_text'],
  ];

  it.each(hostile)(
    '%s: invalid with a stable reason; its valid neighbours are accepted',
    async (_n, overrides, rejectReason) => {
      const inbox = makeInbox(t.prisma);
      const before = message();
      const after = message();
      const results = await inbox.acceptMany([before, message(overrides), after] as InboxAcceptInput[]);
      expect(results[0]).toMatchObject({ kind: 'accepted' });
      expect(results[1]).toMatchObject({ kind: 'invalid', code: 'FERRY_VALIDATION_FAILED', rejectReason });
      expect(results[2]).toMatchObject({ kind: 'accepted' });
      const error = await inbox.accept(message(overrides) as InboxAcceptInput).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FerryValidationError);
      expect(error).toMatchObject({ retriable: false, details: { rule: rejectReason } });
      expect(isFerryError(error, 'FERRY_DATABASE_UNAVAILABLE')).toBe(false);
    },
  );

  it('refuses a non-array batch with a validation error and a non-object entry as invalid', async () => {
    const inbox = makeInbox(t.prisma);
    for (const batch of [null, {}, 'x']) {
      const error = await inbox.acceptMany(batch as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FerryValidationError);
      expect(error).toMatchObject({ field: 'inputs', retriable: false });
    }
    const results = await inbox.acceptMany([null, 7, message()] as never);
    expect(results.map((r) => r.kind)).toEqual(['invalid', 'invalid', 'accepted']);
  });

  it('accepts headers and nesting right at the limits', async () => {
    const inbox = makeInbox(t.prisma);
    const headers = Object.fromEntries(
      Array.from({ length: INBOX_INPUT_LIMITS.maxHeaders }, (_, i) => [`h${i}`, 'v']),
    );
    const payload = nested(INBOX_INPUT_LIMITS.maxPayloadDepth - 1);
    const result = await inbox.accept(message({ headers, payload }) as InboxAcceptInput);
    expect(result.kind).toBe('accepted');
    expect(result.record.payload).toEqual(payload);
    expect(result.record.headers).toEqual(headers);
  });
});
