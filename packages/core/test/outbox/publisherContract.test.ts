/**
 * The Publisher contract is public: applications write publishers for other brokers. What one
 * returns is checked, never trusted: an answer that is not an array, an entry that is not an
 * outcome, a status ferry does not know, an error that is not text, or two different outcomes
 * for one message. The cycle always completes its batch (nothing is left PROCESSING to be
 * published again after its lease), a message is SENT only on one clear `sent`, and last_error
 * says what the publisher did wrong.
 */
import { emitMany, type OutboxMessage, type Publisher } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { relay } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

type Answer = (messages: readonly OutboxMessage[]) => unknown;

async function cycleWith(answer: Answer): Promise<string[]> {
  await t.db.execute('DELETE FROM outbox_events');
  await emitMany(t.db, [
    { type: 'a', payload: { n: 0 } },
    { type: 'b', payload: { n: 1 } },
    { type: 'c', payload: { n: 2 } },
  ]);
  const publisher: Publisher = { publish: async (messages) => answer(messages) as never };
  const r = relay(t.db, publisher);
  try {
    await r.runOnce();
  } finally {
    await r.close();
  }
  const rows = await t.db.query<{ s: string }>(
    `SELECT status || ' ' || retry_count || ' ' || coalesce(last_error, '-') AS s FROM outbox_events ORDER BY seq`,
  );
  return rows.map((row) => row.s);
}

const sent = (m: OutboxMessage) => ({ id: m.id, status: 'sent' });

test.each<[string, Answer, string[]]>([
  [
    'not an array',
    () => 'nope',
    [0, 1, 2].map(() => 'PENDING 1 publisher returned a string, not an array of outcomes'),
  ],
  [
    'undefined',
    () => undefined,
    [0, 1, 2].map(() => 'PENDING 1 publisher returned undefined, not an array of outcomes'),
  ],
  [
    'a null entry',
    (m) => m.map((x, i) => (i === 1 ? null : sent(x))),
    ['SENT 0 -', 'PENDING 1 publisher reported no outcome', 'SENT 0 -'],
  ],
  [
    'a status ferry does not know',
    (m) => m.map((x, i) => (i === 1 ? { id: x.id, status: 'weird' } : sent(x))),
    ['SENT 0 -', 'PENDING 1 publisher reported no outcome (status "weird" is not one)', 'SENT 0 -'],
  ],
  [
    'an error that is not text, and none at all',
    (m) => [
      { id: m[0]!.id, status: 'retryable', error: { code: 7 } },
      { id: m[1]!.id, status: 'permanent' },
      sent(m[2]!),
    ],
    ['PENDING 1 {"code":7}', 'FAILED 1 publisher gave no error', 'SENT 0 -'],
  ],
  [
    'two different outcomes for one message',
    (m) => [...m.map((x) => ({ id: x.id, status: 'retryable', error: 'e' })), sent(m[0]!)],
    ['PENDING 1 publisher reported conflicting outcomes (retryable, sent)', 'PENDING 1 e', 'PENDING 1 e'],
  ],
])(
  'a publisher answering with %s: the batch completes, nothing is SENT without a clear sent',
  async (_what, answer, expected) => {
    expect(await cycleWith(answer)).toEqual(expected);
  },
);
