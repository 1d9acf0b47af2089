/**
 * Review 94 (failed first): a reserved header name (`x-ferry-*`) holding a line break.
 *
 * What I did: emitted events whose own headers were named `x-ferry-tenant-id\n`,
 * `X-Ferry-Message-Id\r`, `x-ferry-a\u2028b`; passed the same names through putStorableHeader
 * as a delivery's headers and through eventHeaders as a stored row's.
 * What happened: emit refuses `x-ferry-tenant-id` in any case (`reserved_header`), but took these
 * (isReservedHeader's `x-ferry-.*` stopped at the line break: `.` matches no \n, \r, U+2028 or
 * U+2029), so they went to the broker and on into the next consumer's inbox as headers in
 * ferry's namespace that ferry did not write.
 * What should happen: every name starting `x-ferry-` (any case) is reserved, whatever follows.
 */
import { emit, FerryValidationError, type OutboxMessage } from '@ferry/core';
import { eventHeaders, putStorableHeader } from '@ferry/core/transport';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const NAMES = ['x-ferry-tenant-id\n', 'X-Ferry-Message-Id\r', 'x-ferry-a\u2028b', 'x-ferry-\u2029'];

describe('an x-ferry-* name holding a line break is reserved', () => {
  it.each(NAMES)('emit refuses %j as reserved_header', async (name) => {
    const error = await emit(t.db, { type: 't', payload: {}, headers: { [name]: 'acme' } }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(FerryValidationError);
    expect((error as FerryValidationError).details).toMatchObject({ rule: 'reserved_header' });
  });

  it('a delivery keeps none of them, nor does a publisher from a stored row', () => {
    const delivered: Record<string, string> = {};
    for (const name of NAMES) putStorableHeader(delivered, name, 'acme');
    expect(delivered).toEqual({});
    const row = { headers: Object.fromEntries(NAMES.map((n) => [n, 'acme'])) } as unknown as OutboxMessage;
    expect(eventHeaders(row)).toEqual({});
  });
});
