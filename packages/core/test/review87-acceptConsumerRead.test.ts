/**
 * Review 87 (inbox acceptance of application objects), failing on main.
 *
 * What I did: acceptMany on an inbox with handlers, one input of the batch with a `consumer` getter:
 * one that throws, and one that answers a handled consumer to its first reads and a consumer no
 * handler takes afterwards; beside it an input for a consumer without a handler and valid ones.
 *
 * What happened: the handler check (handlerCheck.ts acceptHandled) reads `input.consumer` once to
 * pick the inputs to store and again to put the results back in order. A throwing getter rejected
 * the whole batch with the getter's own error (the neighbours were not answered; "an input whose
 * value throws as it is read is invalid alone, never the batch's error"). A getter answering
 * otherwise the second time shifted the results: the hostile input, stored, was answered
 * FERRY_HANDLER_MISSING (a transport dead-letters it while its receipt runs), and the next valid
 * input was answered with the hostile input's receipt id.
 *
 * A hole in the batch (`[a, , b]`) was skipped by forEach / filter / map: the batch failed with
 * a TypeError after its neighbours were committed.
 *
 * What should happen: each input's fields are read once, for the handler check, the checks and the
 * stored row alike; results stay in their inputs' order; an unreadable input is invalid alone.
 */
import { type InboxAcceptInput } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { makeInbox, message } from './inbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const handlers = { orders: async () => undefined };

async function consumerOf(id: string): Promise<string | undefined> {
  const [row] = await t.db.query<{ consumer: string }>(
    'SELECT consumer FROM ferry_inbox_receipts WHERE id = $1::uuid',
    [id],
  );
  return row?.consumer;
}

it('an input whose consumer getter throws is invalid alone; its neighbours are accepted', async () => {
  const inbox = makeInbox(t.prisma, { handlers });
  const hostile = Object.defineProperty(message(), 'consumer', {
    enumerable: true,
    get: () => {
      throw new Error('consumer getter failed');
    },
  });
  const results = await inbox.acceptMany([message(), hostile, message()] as InboxAcceptInput[]);
  expect(results.map((r) => r.kind)).toEqual(['accepted', 'invalid', 'accepted']);
  expect(results[1]).toMatchObject({ code: 'FERRY_VALIDATION_FAILED', rejectReason: 'inbox_invalid' });
});

it('a consumer getter answering otherwise after its first read never shifts the results', async () => {
  const inbox = makeInbox(t.prisma, { handlers });
  let reads = 0;
  const hostile = Object.defineProperty(message(), 'consumer', {
    enumerable: true,
    get: () => ((reads += 1) <= 2 ? 'orders' : 'nobody'),
  });
  const unhandled = message({ consumer: 'nobody' });
  const after = message();
  const results = await inbox.acceptMany([hostile, unhandled, after] as InboxAcceptInput[]);
  expect(results.map((r) => r.kind)).toEqual(['accepted', 'invalid', 'accepted']);
  expect(results[1]).toMatchObject({ code: 'FERRY_HANDLER_MISSING' });
  const [first, , last] = results as ReadonlyArray<{ id?: string }>;
  expect(first?.id).not.toBe(last?.id);
  expect(await consumerOf(String(first?.id))).toBe('orders');
  const [row] = await t.db.query<{ id: string }>(
    'SELECT id FROM ferry_inbox_receipts WHERE message_id = $1',
    [after.messageId],
  );
  expect(last?.id).toBe(row?.id);
});

it('a hole in the batch is invalid alone; its neighbours are accepted', async () => {
  const inbox = makeInbox(t.prisma, { handlers });
  // eslint-disable-next-line no-sparse-arrays -- the hole is the case
  const batch = [message(), , message()] as InboxAcceptInput[];
  const results = await inbox.acceptMany(batch);
  expect(results).toHaveLength(3);
  expect([0, 1, 2].map((i) => results[i]?.kind)).toEqual(['accepted', 'invalid', 'accepted']);
});
