/**
 * A publisher's error often quotes the message or the connection (a URL with its password, a
 * header, an SQS body). The relay stores it as last_error and reports it to observers and the
 * logger: all of them get it redacted, with the inbox's rules and the same `redact` option.
 */
import {
  createOutboxAdmin,
  createRelay,
  emitMany,
  type OutboxEvent,
  type OutboxOptions,
  type Publisher,
  type PublishOutcome,
  type SqlExecutor,
} from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { writtenLog } from '../../../../test-support/writtenLog';
import { waitFor } from './helpers';

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

// The card number (`4111 1111 ...`, `41111111...`), not its first digits alone: an event's
// durationMs (13.4111190…) matched /4111/ once in CI.
const SECRETS = /s3cret|hunter2|4111 ?1111|abc\.def\.ghi|555 123 4567/;

function recorder(): { events: OutboxEvent[]; observer: (event: OutboxEvent) => void } {
  const events: OutboxEvent[] = [];
  return { events, observer: (event) => void events.push(event) };
}

/** Answers each message with the outcome its payload names. */
class LeakyPublisher implements Publisher {
  async publish(messages: readonly { id: string; payload: unknown }[]): Promise<readonly PublishOutcome[]> {
    return messages.map((message): PublishOutcome => {
      const { status, error } = message.payload as { status: 'retryable' | 'permanent'; error: string };
      return { id: message.id, status, error };
    });
  }
}

async function lastErrors(): Promise<Map<string, string | null>> {
  const rows = await t.db.query<{ id: string; last_error: string | null }>(
    `SELECT id::text AS id, last_error FROM outbox_events`,
  );
  return new Map(rows.map((row) => [row.id, row.last_error]));
}

function run(publisher: Publisher, options: OutboxOptions = {}, db: SqlExecutor = t.db) {
  const { logger, text } = writtenLog();
  const { events, observer } = recorder();
  const relay = createRelay({ db, publisher, options, observer, logger });
  return { relay, events, logged: text };
}

describe('outbox error redaction', () => {
  it('keeps URL passwords, keys, tokens and card numbers out of last_error, observer events and log lines', async () => {
    const { ids } = await emitMany(t.db, [
      {
        type: 'retried',
        payload: {
          status: 'retryable',
          error: 'channel closed: amqp://app:s3cret@broker:5672/vh; password=hunter2',
        },
      },
      {
        type: 'failed',
        payload: {
          status: 'permanent',
          error: 'SQS refused body {"card":"4111 1111 1111 1111"}; Authorization: Bearer abc.def.ghi',
        },
      },
    ]);
    const { relay, events, logged } = run(new LeakyPublisher());
    expect(await relay.runOnce()).toMatchObject({ retried: 1, failed: 1 });
    await relay.close();

    const stored = await lastErrors();
    expect(stored.get(ids[0] as string)).toBe(
      'channel closed: amqp://[redacted]@broker:5672/vh; password=[redacted]',
    );
    expect(stored.get(ids[1] as string)).toBe(
      'SQS refused body {"card":"[redacted-card]"}; Authorization: [redacted] [redacted]',
    );
    const observed = events.filter((e) => e.type === 'retry-scheduled' || e.type === 'failed');
    expect(observed).toHaveLength(2);
    for (const text of [JSON.stringify(observed), logged()]) {
      expect(text).not.toMatch(SECRETS);
      expect(text).toContain('[redacted');
    }
  });

  it('redacts what a throwing publisher said, stored and observed', async () => {
    const { ids } = await emitMany(t.db, [{ type: 'thrown', payload: {} }]);
    const publisher: Publisher = {
      publish: async () => {
        throw new Error('connect to amqp://app:s3cret@broker:5672 failed, token: hunter2');
      },
    };
    const { relay, events, logged } = run(publisher);
    expect(await relay.runOnce()).toMatchObject({ retried: 1 });
    await relay.close();
    const stored = String((await lastErrors()).get(ids[0] as string));
    expect(stored).toBe('publish failed: connect to amqp://[redacted]@broker:5672 failed, token: [redacted]');
    expect(JSON.stringify(events)).not.toMatch(SECRETS);
    expect(logged()).not.toMatch(SECRETS);
  });

  it('redacts the error of a circuit-opened event and its log line', async () => {
    await emitMany(t.db, [{ type: 'down', payload: {} }]);
    const publisher: Publisher = {
      publish: async (messages) =>
        messages.map((m) => ({
          id: m.id,
          status: 'unavailable' as const,
          error: 'connect ECONNREFUSED amqp://app:s3cret@broker:5672',
        })),
    };
    const { relay, events, logged } = run(publisher);
    await relay.runOnce();
    await relay.close();
    const opened = events.find((e) => e.type === 'circuit-opened');
    expect(opened).toMatchObject({ error: 'connect ECONNREFUSED amqp://[redacted]@broker:5672' });
    expect(logged()).toContain('circuit opened');
    expect(logged()).not.toMatch(SECRETS);
  });

  it('redacts a database failure the relay logs and observes', async () => {
    // The database as a driver reports it unreachable, quoting its connection string.
    const refuse = async (): Promise<never> => {
      throw Object.assign(new Error('connection to postgresql://app:s3cret@db:5432/x refused'), {
        detail: 'password=hunter2',
      });
    };
    const failing: SqlExecutor = {
      query: refuse,
      execute: refuse,
      transaction: refuse,
      inTransaction: false,
    };
    const { relay, events, logged } = run(new LeakyPublisher(), {}, failing);
    relay.start();
    await waitFor(() => events.some((e) => e.type === 'infrastructure-error'));
    await relay.close();
    expect(JSON.stringify(events)).not.toMatch(SECRETS);
    expect(logged()).toContain('outbox relay cycle failed');
    expect(logged()).not.toMatch(SECRETS);
  });

  it("keeps what the application's redact.allow allows, as the inbox does", async () => {
    const { ids } = await emitMany(t.db, [
      {
        type: 'allowed',
        payload: {
          status: 'permanent',
          error: 'order 9000000000001 refused, card 4111111111111111, token: page-2',
        },
      },
    ]);
    const { relay } = run(new LeakyPublisher(), { redact: { allow: ['token', /order 9\d{12}/] } });
    await relay.runOnce();
    await relay.close();
    expect((await lastErrors()).get(ids[0] as string)).toBe(
      'order 9000000000001 refused, card [redacted-card], token: page-2',
    );
  });

  it("redacts an operator's markFailed reason with the built-in rules, in last_error and the audit", async () => {
    const { ids } = await emitMany(t.db, [{ type: 'given-up', payload: {} }]);
    const id = ids[0] as string;
    const reason = 'broker amqp://app:s3cret@broker keeps refusing; password is hunter2';
    expect(await createOutboxAdmin(t.db).markFailed(id, reason)).toMatchObject({ outcome: 'applied' });
    const redacted = 'broker amqp://[redacted]@broker keeps refusing; password is [redacted]';
    expect((await lastErrors()).get(id)).toBe(redacted);
    const audited = await t.db.query<{ reason: string }>(
      `SELECT reason FROM ferry_operator_audit WHERE action = 'outbox.mark-failed' AND $1::text = ANY (ids)`,
      [id],
    );
    expect(audited).toEqual([{ reason: redacted }]);
  });

  it('rejects a malformed redact option when the relay is created', () => {
    for (const redact of [{ allow: [42] }, { allow: [/^(a+)+$/] }]) {
      expect(() => run(new LeakyPublisher(), { redact } as never)).toThrow(
        expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option: 'redact.allow' }),
      );
    }
    expect(() => run(new LeakyPublisher(), { redact: 'all' } as never)).toThrow(
      expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option: 'redact' }),
    );
  });
});
