/**
 * Review 87 (inbox acceptance, hostile application values), failing on main.
 *
 * What I did: inbox.accept / acceptMany with inputs whose values answer ferry's checks with one
 * value and JSON.stringify with another (a getter, as an application object or a Proxy may have):
 * a header value, a payload member, and a payload member that JSON.stringify reads as a deep
 * nesting.
 *
 * What happened: acceptance checks the object (inputFault) and then serializes it again with
 * JSON.stringify (accept.ts readInput), which reads every value a second time. A header that
 * answers NUL to the second read made PostgreSQL refuse the batch's one INSERT (jsonb refuses
 * \u0000): acceptMany rejected and the valid neighbours of the batch were not accepted. A payload
 * member stored an integer beyond 2^53-1 (documented refused) or a nesting deeper than
 * INBOX_INPUT_LIMITS.maxPayloadDepth.
 *
 * What should happen: "what is stored is what was checked" (as emit does since review 82: the
 * walk writes the text, validate/json.ts jsonText): each value is read once, the stored payload,
 * headers and fingerprint are those of the checked values, and one input never harms its
 * neighbours.
 */
import { INBOX_INPUT_LIMITS, type InboxAcceptInput } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { makeInbox, message, receiptRow } from './inbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** Whether the current call comes from JSON.stringify (a getter answering it otherwise). */
const fromStringify = (): boolean => (new Error().stack ?? '').includes('JSON.stringify');

/** An object whose `key` answers `checked`, except to JSON.stringify, which reads `stored`. */
function twoFaced(key: string, checked: unknown, stored: () => unknown): Record<string, unknown> {
  return Object.defineProperty({}, key, {
    enumerable: true,
    get: () => (fromStringify() ? stored() : checked),
  }) as Record<string, unknown>;
}

function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < levels; i += 1) value = { d: value };
  return value;
}

it('a header answering NUL to a second read is stored as checked; its neighbours are accepted', async () => {
  const inbox = makeInbox(t.prisma);
  const hostile = message({ headers: twoFaced('h', 'v', () => 'a\u0000b') });
  const results = await inbox.acceptMany([message(), hostile, message()] as InboxAcceptInput[]);
  expect(results.map((r) => r.kind)).toEqual(['accepted', 'accepted', 'accepted']);
  const stored = await receiptRow(t, (results[1] as { id: string }).id);
  expect(stored.headers).toEqual({ h: 'v' });
});

it('a payload member answering an integer beyond 2^53-1 to a second read is stored as checked', async () => {
  const inbox = makeInbox(t.prisma);
  const checked = await inbox.accept(message({ messageId: 'big-1', payload: { n: 1 } }) as InboxAcceptInput);
  const result = await inbox.accept(
    message({ messageId: 'big-2', payload: twoFaced('n', 1, () => 2 ** 60) }) as InboxAcceptInput,
  );
  expect(result.kind).toBe('accepted');
  expect(result.record.payload).toEqual({ n: 1 });
  expect((await receiptRow(t, result.record.id)).payload).toEqual({ n: 1 });
  // The fingerprint is the checked payload's: a redelivery of { n: 1 } is a duplicate.
  expect(result.record.payloadFingerprint).toBe(checked.record.payloadFingerprint);
});

it('a payload member answering a deep nesting to a second read is stored as checked', async () => {
  const inbox = makeInbox(t.prisma);
  const deep = nested(INBOX_INPUT_LIMITS.maxPayloadDepth * 4);
  const results = await inbox.acceptMany([
    message(),
    message({ payload: twoFaced('d', 'flat', () => deep) }),
    message(),
  ] as InboxAcceptInput[]);
  expect(results.map((r) => r.kind)).toEqual(['accepted', 'accepted', 'accepted']);
  expect((await receiptRow(t, (results[1] as { id: string }).id)).payload).toEqual({
    d: 'flat',
  });
});
