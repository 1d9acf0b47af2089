/**
 * Review 106: app.init() failing part-way on ferry's own check. An InboxModule whose table is not
 * migrated fails the init, and Nest 11's app.close() then rethrows that failure before any destroy
 * hook runs: whatever ferry had started by then (the relay of an OutboxModule bootstrapped before
 * the inbox) ran on with no way to stop it through Nest. The inbox's schema is checked at module
 * init, before any bootstrap hook starts a loop, so a failed init leaves nothing of ferry running.
 */
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { InboxHandler, InboxModule, InboxService, OutboxModule, OutboxRelayService } from '../src';
import { MemoryPublisher, prismaModule, TestPrismaService } from './fixtures';

let t: TestDatabase;
beforeAll(async () => {
  // ferry migrated but for the inbox's table: the OutboxModule's own check (review 115) passes.
  t = await createTestDatabase();
  await t.db.execute('DROP TABLE ferry_inbox_receipts CASCADE');
});
afterAll(async () => {
  await t.drop();
});

@Injectable()
class Projection {
  @InboxHandler('review106.projection')
  async project(): Promise<void> {}
}

describe('review106: an inbox schema that is not migrated', () => {
  it('fails app.init() before the relay or the worker started: nothing of ferry runs on', async () => {
    const PrismaModule = prismaModule(t.newClient());
    const app = await Test.createTestingModule({
      imports: [
        // The outbox first: its bootstrap (which starts the relay) ran before the inbox's.
        OutboxModule.forRoot({
          prisma: TestPrismaService,
          imports: [PrismaModule],
          publisher: new MemoryPublisher(),
          pollInterval: 20,
        }),
        InboxModule.forRoot({
          prisma: TestPrismaService,
          imports: [PrismaModule],
          worker: { enabled: true },
        }),
      ],
      providers: [Projection],
    }).compile();
    const relay = app.get(OutboxRelayService);
    const inbox = app.get(InboxService);
    try {
      const failure = await app.init().then(
        () => 'initialized',
        (error: { code?: string }) => error.code,
      );
      expect({ failure, relay: relay.relay?.state, inbox: inbox.state }).toEqual({
        failure: 'FERRY_SCHEMA_NOT_READY',
        relay: 'idle',
        inbox: 'ready',
      });
    } finally {
      // Nest 11's app.close() rethrows the init failure: the services are closed directly.
      await relay.onModuleDestroy();
      await inbox.onModuleDestroy();
    }
  });
});
