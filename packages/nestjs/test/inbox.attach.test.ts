import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  FERRY_HEADERS,
  isFerryError,
  type InboxHandlerContext,
  type PrismaTransactionLike,
} from '@ferry/core';
import { InMemoryBroker, attachInMemoryConsumer, waitForInboxRecord, waitUntil } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { InboxAdminService, InboxHandler, InboxModule, InboxService } from '../src';
import { prismaModule, TestPrismaService } from './fixtures';

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});

afterAll(async () => {
  await t.drop();
});

@Injectable()
class Projection {
  readonly handled: string[] = [];
  @InboxHandler('orders.projection')
  async project(
    _payload: Readonly<Record<string, unknown>>,
    context: InboxHandlerContext<PrismaTransactionLike>,
  ): Promise<void> {
    this.handled.push(context.messageId);
  }
}

function errorOf(call: () => unknown): unknown {
  try {
    call();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('InboxService as a transport acceptor', () => {
  it("refuses a consumer name no handler takes at attach, with core's FERRY_HANDLER_MISSING", async () => {
    const app = await Test.createTestingModule({
      imports: [
        InboxModule.forRoot({
          prisma: TestPrismaService,
          imports: [prismaModule(t.newClient())],
          worker: { enabled: true, pollIntervalMs: 20 },
        }),
      ],
      providers: [Projection],
    }).compile();
    const inbox = app.get(InboxService);
    const broker = new InMemoryBroker();
    broker.declareQueue('orders');
    // Before module init the handlers are not known yet: attach fails as acceptance does.
    const early = errorOf(() =>
      attachInMemoryConsumer(inbox, { broker, queue: 'orders', consumer: 'orders.projection' }),
    );
    expect(isFerryError(early, 'FERRY_CLOSED')).toBe(true);
    await app.init();
    try {
      const misspelt = errorOf(() =>
        attachInMemoryConsumer(inbox, { broker, queue: 'orders', consumer: 'orders.projecton' }),
      );
      expect(isFerryError(misspelt, 'FERRY_HANDLER_MISSING')).toBe(true);
      expect(misspelt).toMatchObject({
        details: { consumer: 'orders.projecton', handlers: ['orders.projection'] },
      });

      const consumer = attachInMemoryConsumer(inbox, {
        broker,
        queue: 'orders',
        consumer: 'orders.projection',
      });
      try {
        broker.send('orders', {
          body: Buffer.from('{}'),
          headers: { [FERRY_HEADERS.messageId]: 'm-1', [FERRY_HEADERS.tenantId]: 'tenant-a' },
        });
        const scope = app.get(InboxAdminService).forTenant('tenant-a');
        const page = await waitUntil('the delivery accepted', async () => {
          const { records } = await scope.list();
          return records.length === 1 ? records : undefined;
        });
        await waitForInboxRecord(scope, page[0]!.id);
        expect(app.get(Projection).handled).toEqual(['m-1']);
      } finally {
        await consumer.close();
      }
    } finally {
      await app.close();
    }
  });
});
