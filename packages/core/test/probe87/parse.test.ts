import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message, receiptRow, recorder } from '../inbox/helpers';

jest.setTimeout(120_000);
let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it.each([
  ['never-settling thenable', () => ({ then() {} })],
  ['rejects a string', () => Promise.reject('secret password=hunter2')],
  ['rejects null', () => Promise.reject(null)],
  ['throwing then getter', () => ({ get then() { throw new Error('then getter'); } })],
  ['rejects a Proxy', () => Promise.reject(new Proxy({}, { getPrototypeOf() { throw new Error('trap'); }, get() { throw new Error('trap'); } }))],
  ['resolves a hostile proxy', () => new Proxy({}, { get() { throw new Error('trap'); } })],
  ['rejects with NUL and lone surrogate', () => Promise.reject(new Error('a\u0000b\ud800'))],
])('parse %s', async (name, parse) => {
  const consumer = `p${name.length}x${Math.random().toString(36).slice(2, 6)}`;
  const { events, observer } = recorder();
  const inbox = makeInbox(t.prisma, {
    observer,
    worker: { transactionTimeoutMs: 500, leaseMs: 2000, heartbeatIntervalMs: 100, maxAttempts: 2 },
    handlers: { [consumer]: { parse: parse as never, handle: async () => undefined } },
  });
  const { record } = await inbox.accept(message({ consumer }));
  const t0 = Date.now();
  const result = await inbox.runOnce();
  const row = await receiptRow(t, record.id);
  console.log(name, Date.now() - t0, JSON.stringify(result), row.status, row.last_error, events.filter((e) => e.type !== 'accepted').map((e) => e.type));
});
