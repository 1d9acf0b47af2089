/**
 * Review 88 (the relay reading a publisher's answer), failing on main.
 *
 * What I did: a publisher (the Publisher contract is public: an application's own) answering an
 * array claiming far more outcomes than the batch has (a sparse array of length 2^32-1, a Proxy),
 * and one whose elements throw as they are read.
 *
 * What happened: the relay iterated the answer whole, in one synchronous turn: 2^32-1 indexes
 * (minutes of a blocked event loop: no heartbeat, no other relay work, no HTTP). An element that
 * threw escaped the check: the cycle failed, its rows stayed PROCESSING until their lease expired.
 *
 * What should happen: as emitMany's events and acceptMany's inputs, the answer's length is read
 * once (arrayLengthArgument, at most 10,000: more than any batch); a longer one, or one that cannot
 * be read, is a publisher's malformed answer as one that is no array: every message retryable with
 * the reason, the cycle completed.
 */
import { emitMany, type OutboxMessage, type Publisher, type PublishOutcome } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { relay, statusOf } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});
beforeEach(async () => {
  await t.db.execute('DELETE FROM outbox_events');
});

/**
 * An answer claiming `length` entries, the messages' `sent` outcomes at their indexes, counting the
 * indexes read; past 20,000 reads, or when `throwAt` is read, an index throws.
 */
function answer(
  messages: readonly OutboxMessage[],
  length: number,
  throwAt?: number,
): { outcomes: PublishOutcome[]; reads: () => number } {
  let reads = 0;
  const sent = messages.map((m): PublishOutcome => ({ id: m.id, status: 'sent' }));
  const outcomes = new Proxy(sent, {
    get(target, key, receiver) {
      if (key === 'length') return length;
      if (typeof key === 'string' && /^\d+$/.test(key)) {
        reads += 1;
        if (reads > 20_000) throw new Error('read past 20,000 indexes');
        if (Number(key) === throwAt) throw new Error('no outcome here');
      }
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  return { outcomes, reads: () => reads };
}

it('an answer of length 2^32-1 is refused unread: every message retryable, the cycle completed', async () => {
  const { ids } = await emitMany(t.db, [
    { type: 'a', payload: {} },
    { type: 'b', payload: {} },
  ]);
  let reads = (): number => -1;
  const publisher: Publisher = {
    async publish(messages) {
      const given = answer(messages, 2 ** 32 - 1);
      reads = given.reads;
      return given.outcomes;
    },
  };
  const r = relay(t.db, publisher);
  const result = await r.runOnce();
  await r.close();
  expect(result).toMatchObject({ claimed: 2, sent: 0, retried: 2 });
  expect(reads()).toBe(0);
  for (const id of ids) {
    expect(await statusOf(t.db, id)).toMatchObject({
      status: 'PENDING',
      // The count itself is redacted as a phone number by the default redaction.
      last_error: expect.stringMatching(
        /^publisher returned an answer refused: .* outcomes; the limit is 10000$/,
      ),
    });
  }
});

it('an answer whose element throws as it is read: every message retryable, the cycle completed', async () => {
  const { ids } = await emitMany(t.db, [
    { type: 'a', payload: {} },
    { type: 'b', payload: {} },
  ]);
  const publisher: Publisher = {
    async publish(messages) {
      return answer(messages, messages.length, 1).outcomes;
    },
  };
  const r = relay(t.db, publisher);
  const result = await r.runOnce();
  await r.close();
  expect(result).toMatchObject({ claimed: 2, sent: 0, retried: 2 });
  for (const id of ids) {
    expect(await statusOf(t.db, id)).toMatchObject({
      status: 'PENDING',
      last_error: expect.stringMatching(/could not be read: no outcome here/),
    });
  }
});
