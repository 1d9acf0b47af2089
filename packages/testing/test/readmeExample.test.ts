import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { Pool } from 'pg';
import { FERRY_HEADERS, InboxAdmin, createInbox, pgTransactions } from '@ferry/core';
import {
  InMemoryBroker,
  attachInMemoryConsumer,
  drainInbox,
  dropDatabase,
  recreateDatabase,
  waitForInboxRecord,
  waitUntil,
} from '@ferry/testing';

// A database of the test's own on the server of FERRY_DATABASE_URL, with ferry's migrations.
const url = new URL(process.env.FERRY_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres');
url.pathname = `/orders_test_${randomBytes(4).toString('hex')}`;
let pool: Pool;

beforeAll(async () => {
  await recreateDatabase(url.toString());
  pool = new Pool({ connectionString: url.toString() });
});

afterAll(async () => {
  await pool.end();
  await dropDatabase(url.toString());
});

it('takes a broker delivery through the inbox to its handler', async () => {
  const handled: unknown[] = [];
  const inbox = createInbox(pgTransactions(pool), {
    handlers: { 'orders.projection': async (payload) => void handled.push(payload.orderId) },
  });
  // A queue in memory, consumed with the contract of ferry's transports: acked once accepted.
  const broker = new InMemoryBroker();
  broker.declareQueue('orders');
  const consumer = attachInMemoryConsumer(inbox, { broker, queue: 'orders', consumer: 'orders.projection' });
  try {
    broker.send('orders', {
      body: Buffer.from(JSON.stringify({ orderId: 'o-1' })),
      headers: { [FERRY_HEADERS.messageId]: 'm-1', [FERRY_HEADERS.tenantId]: 'acme' },
    });
    const scope = new InboxAdmin(pool).forTenant('acme');
    // Every wait has a deadline, also when a call it makes never answers.
    const receipt = await waitUntil('the delivery accepted', async () => (await scope.list()).records[0], {
      timeoutMs: 10_000,
    });
    await drainInbox(inbox, { timeoutMs: 10_000 }); // the worker's rounds, run by the test
    await waitForInboxRecord(scope, receipt.id, { status: 'COMPLETED', timeoutMs: 10_000 });
    expect(handled).toEqual(['o-1']);
  } finally {
    await consumer.close();
    await inbox.close();
  }
});
