/**
 * Review 115: an OutboxModule with a relay on a database whose outbox is not migrated.
 *
 * Defect: app.init() succeeded and the relay started; its every cycle then failed with the
 * non-retriable FERRY_SCHEMA_NOT_READY, logged at each back-off for ever, while the InboxModule
 * beside it refused to start with that same code at module init (review 106). The relay's
 * schema is now checked at module init too (core's relay.verify(), as the inbox's verify()):
 * init fails with FERRY_SCHEMA_NOT_READY naming the table, and the relay never started.
 */
import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { OutboxModule, OutboxRelayService } from '../src';
import { MemoryPublisher, prismaModule, TestPrismaService } from './fixtures';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase({ migrate: false });
});
afterAll(async () => {
  await t.drop();
});

it('app.init() fails with FERRY_SCHEMA_NOT_READY and the relay never starts', async () => {
  const app = await Test.createTestingModule({
    imports: [
      OutboxModule.forRoot({
        prisma: TestPrismaService,
        imports: [prismaModule(t.newClient())],
        publisher: new MemoryPublisher(),
        pollInterval: 20,
      }),
    ],
  }).compile();
  const relay = app.get(OutboxRelayService);
  try {
    const failure = await app.init().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ code: 'FERRY_SCHEMA_NOT_READY', missing: ['table:outbox_events'] });
    expect(relay.relay?.state).toBe('idle');
  } finally {
    await relay.onModuleDestroy();
  }
});
