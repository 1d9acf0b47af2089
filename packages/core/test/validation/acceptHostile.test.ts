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
    ['negative zero in the payload', { payload: { n: -0 } }, 'inbox_invalid'],
    ['an integer beyond 2^53-1 in the payload', { payload: { id: 2 ** 53 + 2 } }, 'inbox_invalid'],
    ['a whitespace-only message id', { messageId: ' ' }, 'inbox_invalid'],
    ['a message id of tabs and newlines', { messageId: '\t\r\n\u00a0\u2028' }, 'inbox_invalid'],
    ['a control character in the message id', { messageId: 'm-\u0007' }, 'inbox_invalid'],
    ['a C1 control character in the message id', { messageId: 'm-\u0085' }, 'inbox_invalid'],
    ['DEL in the message id', { messageId: '\u007f' }, 'inbox_invalid'],
    ['a whitespace-only tenant', { tenantId: ' ' }, 'inbox_invalid'],
    ['a control character in the tenant', { tenantId: 'acme\n' }, 'inbox_invalid'],
    ['a message id of a zero-width space', { messageId: '\u200b' }, 'inbox_invalid'],
    ['a message id of joiners', { messageId: '\u200d\u2060' }, 'inbox_invalid'],
    ['a message id of a BOM and a soft hyphen', { messageId: '\ufeff\u00ad ' }, 'inbox_invalid'],
    ['a message id of Hangul fillers', { messageId: '\u3164\u115f' }, 'inbox_invalid'],
    ['a tenant of a zero-width space', { tenantId: '\u200b\u200b' }, 'inbox_invalid'],
    ['a line separator in the message id', { messageId: 'm-\u2028-1' }, 'inbox_invalid'],
    ['a paragraph separator in the tenant', { tenantId: 'acme\u2029' }, 'inbox_invalid'],
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

  it.each([
    ['type', 'type', 256, 'type is 256 characters; the limit is 255'],
    ['a 10,000-character type', 'type', 10_000, 'type is 10000 characters; the limit is 255'],
    ['messageId', 'messageId', 256, 'messageId is 256 characters; the limit is 255'],
    ['consumer', 'consumer', 201, 'consumer is 201 characters; the limit is 200'],
    ['tenantId', 'tenantId', 256, 'tenantId is 256 characters; the limit is 255'],
    ['system', 'system', 201, 'system is 201 characters; the limit is 200'],
  ])('refuses a too long %s saying so, with the limit', async (_n, field, length, reason) => {
    const inbox = makeInbox(t.prisma);
    const [result] = await inbox.acceptMany([message({ [field]: 'x'.repeat(length) }) as InboxAcceptInput]);
    expect(result).toMatchObject({ kind: 'invalid', reason, rejectReason: 'inbox_invalid' });
  });

  it.each([
    ['type', 7, 'type must be null or a string, got a number'],
    ['type', '', 'type must not be empty'],
    ['messageId', ' ', 'messageId must not be only whitespace'],
    ['messageId', 'a\nb', 'messageId must not contain a control character (U+000A)'],
    ['messageId', '\u200b\u200d', 'messageId must not be only invisible characters (U+200B U+200D)'],
    ['messageId', 'a\u2028b', 'messageId must not contain a line break (U+2028)'],
    ['system', [], 'system must be null or a string, got an array'],
  ])('refuses %s %j saying why', async (field, value, reason) => {
    const inbox = makeInbox(t.prisma);
    const [result] = await inbox.acceptMany([message({ [field]: value }) as InboxAcceptInput]);
    expect(result).toMatchObject({ kind: 'invalid', reason });
  });

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
