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

/** An Error whose message getter throws (a Proxy over an error object behaves the same). */
function unreadableError(): Error {
  const error = new Error('x');
  Object.defineProperty(error, 'message', {
    get() {
      throw new TypeError('message unreadable');
    },
  });
  return error;
}

async function statusByType(): Promise<Record<string, [string, string | null]>> {
  const rows = await t.db.query<{ type: string; status: string; last_error: string | null }>(
    `SELECT event_type AS type, status, last_error FROM outbox_events`,
  );
  return Object.fromEntries(rows.map((row) => [row.type, [row.status, row.last_error]]));
}

// The publisher answered; reading its error must not throw the batch away (its sent outcomes
// discarded and republished after the lease, the claim counted towards the poison guard).
describe('a publisher error that cannot be read', () => {
  beforeEach(async () => {
    await t.db.execute('DELETE FROM outbox_events');
  });

  it("an outcome's unreadable Error still completes the batch (the sent one stays SENT)", async () => {
    await emitMany(t.db, [
      { type: 'ok', payload: {} },
      { type: 'bad', payload: {} },
    ]);
    const publisher: Publisher = {
      publish: async (messages) =>
        messages.map((m): PublishOutcome =>
          m.type === 'ok'
            ? { id: m.id, status: 'sent' }
            : ({ id: m.id, status: 'retryable', error: unreadableError() } as unknown as PublishOutcome),
        ),
    };
    const r = relay(t.db, publisher);
    try {
      await expect(r.runOnce()).resolves.toMatchObject({ sent: 1, retried: 1 });
    } finally {
      await r.close();
    }
    expect(await statusByType()).toEqual({
      ok: ['SENT', null],
      bad: ['PENDING', 'Error: (its name or message could not be read)'],
    });
  });

  it.each([
    ['an Error whose message getter throws', unreadableError],
    ['a null-prototype object (String() throws)', () => Object.create(null) as unknown],
  ])('a publisher that throws %s: the batch is retryable, not left claimed', async (_name, make) => {
    await emitMany(t.db, [{ type: 'thrown', payload: {} }]);
    const publisher: Publisher = {
      publish: async () => {
        throw make();
      },
    };
    const r = relay(t.db, publisher);
    try {
      await expect(r.runOnce()).resolves.toMatchObject({ retried: 1 });
    } finally {
      await r.close();
    }
    expect(await statusByType()).toEqual({ thrown: ['PENDING', expect.stringMatching(/^publish failed: /)] });
  });
});
