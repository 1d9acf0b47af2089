import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { latch, makeInbox, message, recorder, waitFor } from '../inbox/helpers';

jest.setTimeout(120_000);
let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

async function statuses(consumer: string): Promise<Record<string, number>> {
  const rows = await t.db.query<{ status: string; n: number }>(
    'SELECT status, count(*)::int AS n FROM ferry_inbox_receipts WHERE consumer = $1 GROUP BY status',
    [consumer],
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

it('A: concurrent runOnce with start/close never exceeds concurrency; all complete', async () => {
  for (let round = 0; round < 5; round += 1) {
    const consumer = `a${round}`;
    let running = 0;
    let max = 0;
    const inbox = makeInbox(t.prisma, {
      worker: { concurrency: 2, prefetch: 3, leaseMs: 3000, heartbeatIntervalMs: 100 },
      handlers: {
        [consumer]: async () => {
          running += 1;
          max = Math.max(max, running);
          await new Promise((r) => setTimeout(r, 5 + Math.random() * 20));
          running -= 1;
        },
      },
    });
    await inbox.acceptMany(Array.from({ length: 30 }, () => message({ consumer })));
    const runs = [inbox.runOnce(), inbox.runOnce()];
    if (round % 2 === 0) inbox.start();
    runs.push(inbox.runOnce(), inbox.runOnce());
    inbox.start();
    runs.push(inbox.runOnce());
    await Promise.all(runs);
    await waitFor('all complete', async () => (await statuses(consumer)).COMPLETED === 30);
    expect(max).toBeLessThanOrEqual(2);
    await inbox.close();
    await expect(inbox.runOnce()).rejects.toMatchObject({ code: 'FERRY_CLOSED' });
  }
});

it('B: close while runOnce claims; runOnce after close', async () => {
  const consumer = 'b';
  const inbox = makeInbox(t.prisma, {
    worker: { concurrency: 2, shutdownTimeoutMs: 200 },
    handlers: { [consumer]: async () => undefined },
  });
  await inbox.acceptMany(Array.from({ length: 4 }, () => message({ consumer })));
  const run = inbox.runOnce();
  const closing = inbox.close();
  const late = inbox.runOnce().catch((e: unknown) => e);
  const [result] = await Promise.all([run, closing]);
  console.log('B result', result, await late, await statuses(consumer));
});

it('C: a never-settling handler and a sync throw', async () => {
  const consumer = 'c';
  const never = latch();
  const { events, observer } = recorder();
  const inbox = makeInbox(t.prisma, {
    observer,
    worker: { concurrency: 2, shutdownTimeoutMs: 300, transactionTimeoutMs: 500, leaseMs: 2000, heartbeatIntervalMs: 100 },
    handlers: {
      [consumer]: ((payload: { n: number }) => {
        if (payload.n % 2 === 0) throw new Error('sync');
        return never.promise;
      }) as never,
    },
  });
  await inbox.acceptMany([message({ consumer, payload: { n: 1 } }), message({ consumer, payload: { n: 2 } })]);
  const result = await inbox.runOnce();
  console.log('C result', result, await statuses(consumer), events.map((e) => e.type));
  const again = await inbox.runOnce();
  console.log('C again', again);
});
