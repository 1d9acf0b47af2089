/**
 * Review 136 (probe): InboxModule.forRoot imported by two feature modules of one application
 * (each with its own worker; @InboxHandler methods are discovered application-wide, so both
 * register them). Every message is handled once, whichever worker claims it, and app.close()
 * closes both.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { outcomeWithin } from '../../../test-support/deadlines';
import { InboxHandler, InboxModule, InboxService } from '../src';
import { Events, prismaModule, TestPrismaService, waitFor } from './fixtures';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const handled: string[] = [];

@Injectable()
class Handlers {
  @InboxHandler('review136.twice')
  async handle(_payload: unknown, context: { messageId: string }): Promise<void> {
    handled.push(context.messageId);
  }
}

// Options that differ: Nest makes one module of two identical dynamic modules.
const inbox = (pollIntervalMs: number) =>
  InboxModule.forRoot({ prisma: TestPrismaService, worker: { enabled: true, pollIntervalMs } });

/** What each feature module's providers get injected. */
@Injectable()
class OrdersInbox {
  constructor(readonly inbox: InboxService) {}
}
@Injectable()
class BillingInbox {
  constructor(readonly inbox: InboxService) {}
}

@Module({ imports: [inbox(20)], providers: [Handlers, OrdersInbox] })
class OrdersModule {}

@Module({ imports: [inbox(25)], providers: [BillingInbox] })
class BillingModule {}

it('two InboxModule.forRoot in feature modules: each message handled once; close ends both workers', async () => {
  const app = await Test.createTestingModule({
    imports: [prismaModule(t.newClient(), new Events(), true), OrdersModule, BillingModule],
  }).compile();
  await app.init();
  const services = [app.get(OrdersInbox).inbox, app.get(BillingInbox).inbox];
  expect(services[0]).not.toBe(services[1]);
  const ids = Array.from({ length: 10 }, (_, n) => `m-${n}`);
  for (const [n, messageId] of ids.entries()) {
    await services[n % 2]!.accept({ consumer: 'review136.twice', messageId, tenantId: 'acme', payload: {} });
  }
  await waitFor(async () => {
    const rows = await t.db.query<{ n: string }>(
      "SELECT count(*) AS n FROM ferry_inbox_receipts WHERE status = 'COMPLETED'",
    );
    return Number(rows[0]!.n) === ids.length;
  }, 'every receipt completed');
  expect([...handled].sort()).toEqual([...ids].sort());
  expect(await outcomeWithin(app.close(), 15_000)).toEqual({ value: undefined });
  expect(services.map((service) => service.state)).toEqual(['closed', 'closed']);
});
