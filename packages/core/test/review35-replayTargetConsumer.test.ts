/**
 * Review 35: inbox replay() checks `targetConsumer` only as text of 1..1,000 characters, not as a
 * consumer name (IDENTIFIER_LIMITS.consumer: 200, the bound the identity index needs).
 *
 * A target consumer of multi-byte characters within that 1,000 reaches PostgreSQL, which refuses
 * the replay receipt's identity-index entry (54000 "index row size 3080 exceeds btree version 4
 * maximum 2704 for index ferry_inbox_receipts_identity"): the operator gets PostgreSQL's message
 * as a FERRY_VALIDATION_FAILED without a `field`, after the database was reached and an `error`
 * audit row written. A 201-character ASCII name is accepted and makes a receipt whose consumer no
 * acceptance would take (accept() refuses a consumer over 200 characters).
 *
 * Contract: docs/inbox.md "Argument values: Checked before anything runs, refused with
 * FerryValidationError naming the argument"; validate/identifierLimits.ts "the one home of each
 * identifier's length limit ... so no value one of them takes is refused by another" (and the
 * database refuses none of them). Reviews before fixed the same shape for dates (22008) and
 * tenant ids.
 *
 * Fix direction: check targetConsumer with acceptance's consumer rule (1..IDENTIFIER_LIMITS.consumer,
 * textFault) before any SQL, field `targetConsumer`.
 */
import { randomUUID } from 'node:crypto';
import { InboxAdmin, isFerryError } from '@ferry/core';
import { useAdminDatabase } from '../../../test-support/adminFixture';

const database = useAdminDatabase();

/** 1,000 distinct-looking CJK ideographs (3 UTF-8 bytes each), from a fixed seed: incompressible. */
function ideographs(count: number): string {
  let state = 35; // xorshift32
  let text = '';
  for (let i = 0; i < count; i += 1) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    text += String.fromCodePoint(0x4e00 + ((state >>> 0) % 0x5000));
  }
  return text;
}

async function failureOf(work: () => Promise<unknown>): Promise<unknown> {
  try {
    return { value: await work() };
  } catch (error) {
    return isFerryError(error)
      ? { code: error.code, field: (error as { field?: string }).field, message: error.message }
      : { error: String(error) };
  }
}

it.each([
  ['1,000 multi-byte characters (PostgreSQL: index row size exceeds 2704)', ideographs(1_000)],
  ['201 characters (acceptance refuses a consumer over 200)', 'c'.repeat(201)],
])('a targetConsumer of %s is refused naming the argument, before any SQL', async (_name, consumer) => {
  const f = await database.fixture();
  const tenant = new InboxAdmin(database.t().prisma).forTenant('acme');
  const before = await database.state();
  const result = await failureOf(() =>
    tenant.replay({
      id: f.tenant.completed.id,
      expectedVersion: f.tenant.completed.expectedVersion,
      requestId: randomUUID(),
      targetConsumer: consumer,
      reason: 'projection rebuild',
      actor: 'ops',
    }),
  );
  expect(result).toMatchObject({ code: 'FERRY_VALIDATION_FAILED', field: 'targetConsumer' });
  // Nothing inserted, nothing audited: the database was not reached.
  expect(await database.state()).toEqual(before);
});
