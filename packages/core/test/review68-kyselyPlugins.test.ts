/**
 * Review 68: a Kysely instance with a result plugin. CamelCasePlugin is Kysely's own, widely used
 * plugin (snake_case columns as camelCase properties). ferry runs its text as raw compiled queries
 * (kysely.ts: "its plugins do not rewrite ferry's statements"), but the instance's executor still
 * runs every plugin's transformResult over ferry's rows, so ferry reads `retryCount`, `createdAt`
 * ... where it expects `retry_count`, `created_at`. Nothing in the README or the spec says a
 * Kysely instance must come without plugins.
 */
import { CamelCasePlugin, Kysely, PostgresDialect } from 'kysely';
import { Pool } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { createOutboxAdmin, emit } from '@ferry/core';
import { fromKysely, kyselyTransactions } from '@ferry/core/kysely';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { FAST_WORKER, makeInbox } from './inbox/helpers';
import { relay, waitFor } from './outbox/helpers';

jest.setTimeout(60_000);

let t: TestDatabase;
let kysely: Kysely<Record<string, never>>;

beforeAll(async () => {
  t = await createTestDatabase();
  kysely = new Kysely<Record<string, never>>({
    dialect: new PostgresDialect({ pool: listened(new Pool({ connectionString: t.url, max: 2 })) }),
    plugins: [new CamelCasePlugin()],
  });
});
afterAll(async () => {
  await kysely.destroy();
  await t.drop();
});

describe('review68: ferry on a Kysely instance with CamelCasePlugin', () => {
  it('the relay on fromKysely publishes an event emitted in a Kysely transaction (it marks it FAILED, never published)', async () => {
    const { id } = await kysely
      .transaction()
      .execute((trx) => emit(trx, { type: 'review68.camel', destination: 'orders', payload: { n: 1 } }));
    const publisher = new InMemoryPublisher();
    const r = relay(fromKysely(kysely), publisher);
    try {
      await waitFor(async () => {
        await r.runOnce();
        const [row] = await t.db.query<{ status: string }>(
          'SELECT status FROM outbox_events WHERE id = $1::uuid',
          [id],
        );
        return row?.status !== 'PENDING' && row?.status !== 'PROCESSING';
      });
    } finally {
      await r.close();
    }
    const [row] = await t.db.query<{ status: string; last_error: string | null }>(
      'SELECT status, last_error FROM outbox_events WHERE id = $1::uuid',
      [id],
    );
    expect({ row, published: publisher.delivered.map((m) => m.id) }).toEqual({
      row: { status: 'SENT', last_error: null },
      published: [id],
    });
  });

  it('the outbox admin on fromKysely lists an event with its timestamps and counters (an Invalid Date, NaN)', async () => {
    const { id } = await emit(fromKysely(kysely), {
      type: 'review68.list',
      destination: 'orders',
      payload: {},
    });
    const { items } = await createOutboxAdmin(fromKysely(kysely)).list({ limit: 50 });
    const item = items.find((candidate) => candidate.id === id);
    expect(item).toBeDefined();
    expect({
      createdAtValid: Number.isFinite(item?.createdAt.getTime()),
      retryCount: item?.retryCount,
    }).toEqual({ createdAtValid: true, retryCount: 0 });
  });

  it('an inbox on kyselyTransactions accepts a message and completes it (accept fails: "a receipt vanished during acceptance")', async () => {
    let handled = 0;
    const inbox = makeInbox(kyselyTransactions(kysely), {
      global: 'shared',
      worker: FAST_WORKER,
      handlers: { 'review68-camel': async () => void (handled += 1) },
    });
    const accepted = await inbox
      .accept({ consumer: 'review68-camel', messageId: 'm-1', tenantId: null, payload: {} })
      .then(
        () => 'accepted',
        (error: unknown) => String(error),
      );
    expect(accepted).toBe('accepted');
    const { completed } = await inbox.runOnce();
    expect({ completed, handled }).toEqual({ completed: 1, handled: 1 });
  });
});
