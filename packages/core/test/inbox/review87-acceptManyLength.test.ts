/**
 * acceptMany (and acceptDetailed) read every index of the array they are given: an array that
 * claims more inputs than a batch may hold (a sparse array, a Proxy claiming length 1e9) had an
 * entry allocated per index, and the process ran out of memory; a Proxy whose length is no
 * array length (-1, 1.5, a string) was answered with as many results as ToLength made of it
 * (none for -1). Each is refused up front with a FerryValidationError naming the length and the
 * limit (INBOX_INPUT_LIMITS.maxBatchInputs), before any element is read and nothing stored.
 */
import { FerryValidationError, INBOX_INPUT_LIMITS, type InboxAcceptInput } from '@ferry/core';
import { acceptIsolated } from '@ferry/core/transport';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message } from './helpers';

/** INBOX_INPUT_LIMITS.maxBatchInputs. */
const LIMIT = 10_000;

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** A Proxy of `[input]` whose `length` answers `length` and which counts its element reads. */
function claiming(length: unknown, reads: { count: number }): InboxAcceptInput[] {
  return new Proxy([message()], {
    get(target, key, receiver) {
      if (key === 'length') {
        if (length instanceof Error) throw length;
        return length;
      }
      if (typeof key === 'string' && /^\d+$/.test(key)) reads.count += 1;
      return Reflect.get(target, key, receiver) as unknown;
    },
  }) as InboxAcceptInput[];
}

async function stored(): Promise<number> {
  const [row] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM ferry_inbox_receipts');
  return row?.n ?? 0;
}

it('refuses a batch longer than the limit, and a length that is no array length, before reading an input', async () => {
  const inbox = makeInbox(t.prisma);
  const limit = LIMIT;
  const before = await stored();

  const over = new Array<InboxAcceptInput>(limit + 1);
  over[0] = message();
  const error = await inbox.acceptMany(over).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(FerryValidationError);
  expect(error).toMatchObject({ field: 'inputs', reason: `has ${limit + 1} inputs; the limit is ${limit}` });
  await expect(inbox.acceptDetailed(over)).rejects.toMatchObject({ field: 'inputs' });

  const reads = { count: 0 };
  for (const length of [1e9, 2 ** 53, -1, 1.5, Number.NaN, '1', undefined, new Error('length trap')]) {
    const refused = await inbox.acceptMany(claiming(length, reads)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(FerryValidationError);
    expect(refused).toMatchObject({ code: 'FERRY_VALIDATION_FAILED', field: 'inputs' });
  }
  expect((await inbox.acceptMany(claiming(1e9, reads)).catch((e: unknown) => e)) as Error).toMatchObject({
    reason: `has 1000000000 inputs; the limit is ${limit}`,
  });
  expect(reads.count).toBe(0);
  expect(await stored()).toBe(before);

  // At the limit, and an empty batch, are answered as ever.
  const full = Array.from({ length: limit }, () => message());
  expect((await inbox.acceptMany(full)).every((result) => result.kind === 'accepted')).toBe(true);
  expect(await inbox.acceptMany([])).toEqual([]);
  expect(await stored()).toBe(before + limit);
  expect(INBOX_INPUT_LIMITS).toMatchObject({ maxBatchInputs: LIMIT });
}, 120_000);

it("is split by the transports' acceptIsolated, so a longer batch of theirs is still accepted", async () => {
  const inbox = makeInbox(t.prisma);
  const inputs = Array.from({ length: LIMIT + 3 }, () => message());
  const results = await acceptIsolated(inputs, (batch) => inbox.acceptMany(batch));
  expect(results).toHaveLength(inputs.length);
  expect(results.every((result) => result.kind === 'accepted')).toBe(true);
}, 120_000);
