/**
 * Review 136 (probe): app.close() called twice at once while a handler runs. Both calls resolve
 * once the worker drained, the handler ran once and its receipt completed, and the application's
 * Prisma client left no connection open.
 */
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { outcomeWithin } from '../../../test-support/deadlines';
import { InboxHandler, InboxModule, InboxService } from '../src';
import { Events, gate, prismaModule, TestPrismaService, waitFor } from './fixtures';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const running = gate();
const release = gate();
let calls = 0;

@Injectable()
class SlowHandlers {
  @InboxHandler('review136.slow')
  async handle(): Promise<void> {
    calls += 1;
    running.open();
    await release.promise;
  }
}

async function connections(): Promise<number> {
  const rows = await t.db.query<{ n: string }>(
    'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
    [t.name],
  );
  return Number(rows[0]!.n);
}

it('two concurrent app.close() during a handler: both resolve after it, the handler ran once, no connection left', async () => {
  const app = await Test.createTestingModule({
    imports: [
      InboxModule.forRoot({
        prisma: TestPrismaService,
        imports: [prismaModule(t.newClient(), new Events(), true)],
        worker: { enabled: true, pollIntervalMs: 20, shutdownTimeoutMs: 10_000 },
      }),
    ],
    providers: [SlowHandlers],
  }).compile();
  await app.init();
  await app.get(InboxService).accept({
    consumer: 'review136.slow',
    messageId: 'm-1',
    tenantId: 'acme',
    payload: {},
  });
  await running.promise;
  const closes = [app.close(), app.close()];
  setTimeout(() => release.open(), 200);
  const outcome = await outcomeWithin(Promise.all(closes), 20_000);
  expect(outcome).toEqual({ value: [undefined, undefined] });
  expect(calls).toBe(1);
  const record = await t.db.query<{ status: string; attempts: number }>(
    "SELECT status, attempts FROM ferry_inbox_receipts WHERE message_id = 'm-1'",
  );
  expect(record).toEqual([{ status: 'COMPLETED', attempts: 1 }]);
  await waitFor(async () => (await connections()) === 0, 'no connection of the app left', 10_000);
});
