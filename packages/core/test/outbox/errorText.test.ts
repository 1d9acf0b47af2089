/**
 * A publisher's error text is stored as last_error. A custom publisher, or a broker's message
 * passed through, can hold text PostgreSQL refuses (NUL) or megabytes: the completion of the
 * whole batch must still commit, with the text made storable and bounded.
 */
import { emitMany, type OutboxMessage, type Publisher, type PublishOutcome } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { relay } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

class TextPublisher implements Publisher {
  async publish(messages: readonly OutboxMessage[]): Promise<readonly PublishOutcome[]> {
    return messages.map((message): PublishOutcome => {
      const kind = (message.payload as { kind: string }).kind;
      if (kind === 'nul') return { id: message.id, status: 'retryable', error: 'broker said \u0000 no' };
      if (kind === 'surrogate') return { id: message.id, status: 'permanent', error: 'lone \ud800 half' };
      return { id: message.id, status: 'sent' };
    });
  }
}

test('a batch whose publisher error texts hold NUL or a lone surrogate completes: neighbours SENT, texts stored with U+FFFD', async () => {
  const { ids } = await emitMany(t.db, [
    { type: 'a', payload: { kind: 'ok' } },
    { type: 'b', payload: { kind: 'nul' } },
    { type: 'c', payload: { kind: 'surrogate' } },
    { type: 'd', payload: { kind: 'ok' } },
  ]);
  const r = relay(t.db, new TextPublisher());

  const result = await r.runOnce();
  await r.close();

  expect([result.sent, result.retried, result.failed]).toEqual([2, 1, 1]);
  const rows = await t.db.query<{ id: string; status: string; last_error: string | null }>(
    `SELECT id::text AS id, status, last_error FROM outbox_events`,
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  expect(ids.map((id) => [byId.get(id)?.status, byId.get(id)?.last_error])).toEqual([
    ['SENT', null],
    ['PENDING', 'broker said \ufffd no'],
    ['FAILED', 'lone \ufffd half'],
    ['SENT', null],
  ]);
});
