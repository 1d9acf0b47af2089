/**
 * Review 119: an OutboxModule without a relay (emit only: no publisher) on a database whose outbox
 * is not migrated. The InboxModule refuses such a database at module init even with its worker
 * switched off (acceptance only); the OutboxModule checked it only when it had a relay, so an
 * emit-only application started and failed at its first emit.
 */
import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { OutboxModule, OutboxRelayService } from '../src';
import { prismaModule, TestPrismaService } from './fixtures';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase({ migrate: false });
});
afterAll(async () => {
  await t.drop();
});

it('an emit-only OutboxModule: app.init() fails with FERRY_SCHEMA_NOT_READY', async () => {
  const app = await Test.createTestingModule({
    imports: [OutboxModule.forRoot({ prisma: TestPrismaService, imports: [prismaModule(t.newClient())] })],
  }).compile();
  try {
    const failure = await app.init().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ code: 'FERRY_SCHEMA_NOT_READY', missing: ['table:outbox_events'] });
  } finally {
    await app.get(OutboxRelayService).onModuleDestroy();
  }
});
