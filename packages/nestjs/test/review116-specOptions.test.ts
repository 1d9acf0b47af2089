/**
 * Review 116: spec/000's OutboxModule.forRoot shapes (retry, lease), as written there, against
 * real PostgreSQL: they reach the emitter and the relay; a maxRetries changed between two
 * deploys leaves the rows the first emitted at their own; the delay bound is checked at init.
 */
import 'reflect-metadata';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  interactiveTransaction,
  type OutboxMessage,
  type PrismaClientLike,
  type Publisher,
  type PublishOutcome,
} from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import {
  OutboxEmitter,
  OutboxModule,
  OutboxOperatorService,
  OutboxRelayService,
  OutboxTenantAdminService,
  type OutboxModuleOptions,
} from '../src';
import { MemoryPublisher, prismaModule, TestPrismaService, waitFor } from './fixtures';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});
beforeEach(async () => {
  await t.db.execute('DELETE FROM outbox_events');
});

type Settings = Omit<OutboxModuleOptions, 'prisma' | 'imports'>;

async function outboxApp(settings: Settings): Promise<TestingModule> {
  const app = await Test.createTestingModule({
    imports: [
      OutboxModule.forRoot({
        prisma: TestPrismaService,
        imports: [prismaModule(t.newClient())],
        ...settings,
      }),
    ],
  }).compile();
  await app.init();
  return app;
}

async function emitIn(app: TestingModule, tenantId: string | null = null): Promise<string> {
  const prisma = app.get(TestPrismaService) as unknown as PrismaClientLike;
  const { id } = await interactiveTransaction(prisma, (tx) =>
    app.get(OutboxEmitter).emit(tx, { type: 'order.created', payload: { orderId: 1 }, tenantId }),
  );
  return id;
}

/** Refuses every message as a retryable failure and counts the attempts per id. */
class RefusingPublisher implements Publisher {
  readonly attempts: OutboxMessage[] = [];
  async publish(messages: readonly OutboxMessage[]): Promise<readonly PublishOutcome[]> {
    this.attempts.push(...messages);
    return messages.map((m) => ({ id: m.id, status: 'retryable' as const, error: 'broker said no' }));
  }
}

describe('review116: OutboxModule.forRoot with the spec’s option shapes', () => {
  it('takes retry { maxRetries, backoff, initialDelay } and lease { duration, heartbeatInterval, heartbeatFailureTolerance }', async () => {
    const app = await outboxApp({
      publisher: new MemoryPublisher(),
      relay: { enabled: false },
      retry: { maxRetries: 5, backoff: 'exponential', initialDelay: 1000 },
      lease: { duration: 300_000, heartbeatInterval: 60_000, heartbeatFailureTolerance: 1 },
    });
    try {
      const id = await emitIn(app);
      expect(await app.get(OutboxOperatorService).get(id)).toMatchObject({
        status: 'PENDING',
        maxRetries: 5,
      });
    } finally {
      await app.close();
    }
    const running = await outboxApp({
      publisher: new MemoryPublisher(),
      retry: { maxRetries: 5, backoff: 'fixed', initialDelay: 1000 },
      lease: { duration: 300_000, heartbeatInterval: 60_000, heartbeatFailureTolerance: 1 },
    });
    try {
      expect(running.get(OutboxRelayService).relay?.options).toMatchObject({
        retry: { maxRetries: 5, backoff: 'fixed', initialDelay: 1_000, maxDelay: 86_400_000 },
        lease: { duration: 300_000, heartbeatInterval: 60_000, heartbeatFailureTolerance: 1 },
      });
    } finally {
      await running.close();
    }
  });

  it('a maxRetries changed by a rolling deploy leaves rows in flight at the value they were emitted with', async () => {
    const before = await outboxApp({ retry: { maxRetries: 2 } });
    let old: string;
    try {
      old = await emitIn(before);
    } finally {
      await before.close();
    }
    const publisher = new RefusingPublisher();
    const after = await outboxApp({ publisher, pollInterval: 20, retry: { maxRetries: 6, initialDelay: 0 } });
    try {
      const fresh = await emitIn(after);
      const operator = after.get(OutboxOperatorService);
      await waitFor(async () => (await operator.stats()).failed === 2, 'both rows FAILED');
      expect(await operator.get(old)).toMatchObject({ status: 'FAILED', retryCount: 2, maxRetries: 2 });
      expect(await operator.get(fresh)).toMatchObject({ status: 'FAILED', retryCount: 6, maxRetries: 6 });
      const attempts = (id: string) => publisher.attempts.filter((m) => m.id === id).map((m) => m.attempt);
      expect(attempts(old)).toEqual([1, 2]);
      expect(attempts(fresh)).toEqual([1, 2, 3, 4, 5, 6]);
    } finally {
      await after.close();
    }
  });

  it('accepts retry.maxDelay 2,147,483,647 and refuses 2,147,483,648 at init, naming it', async () => {
    const app = await outboxApp({ publisher: new MemoryPublisher(), retry: { maxDelay: 2_147_483_647 } });
    try {
      expect(app.get(OutboxRelayService).relay?.options.retry.maxDelay).toBe(2_147_483_647);
    } finally {
      await app.close();
    }
    for (const retry of [{ maxDelay: 2_147_483_648 }, { initialDelay: 2_147_483_648 }]) {
      const option = `retry.${Object.keys(retry)[0]!}`;
      await expect(outboxApp({ publisher: new MemoryPublisher(), retry })).rejects.toMatchObject({
        code: 'FERRY_CONFIG_INVALID',
        option,
      });
      await expect(
        Test.createTestingModule({
          imports: [
            OutboxModule.forRootAsync({
              prisma: TestPrismaService,
              imports: [prismaModule(t.newClient())],
              useFactory: () => ({ retry }),
            }),
          ],
        }).compile(),
      ).rejects.toMatchObject({ code: 'FERRY_CONFIG_INVALID', option });
    }
  });

  it('the tenant admin retries only its tenant’s FAILED rows, with the spec’s outcomes', async () => {
    const failing = await outboxApp({
      publisher: new RefusingPublisher(),
      pollInterval: 20,
      retry: { maxRetries: 1 },
    });
    let mine: string;
    let theirs: string;
    try {
      mine = await emitIn(failing, 'tenant-a');
      theirs = await emitIn(failing, 'tenant-b');
      const operator = failing.get(OutboxOperatorService);
      await waitFor(async () => (await operator.stats()).failed === 2, 'both rows FAILED');
    } finally {
      await failing.close();
    }
    // No publisher: no relay takes the retried row away while the outcomes are asked.
    const app = await outboxApp({});
    try {
      const admin = app.get(OutboxTenantAdminService).forTenant('tenant-a');
      expect(await admin.retry(theirs)).toEqual({ id: theirs, outcome: 'not_found' });
      expect(await admin.retry(mine)).toEqual({ id: mine, outcome: 'applied' });
      expect(await admin.retry(mine)).toEqual({ id: mine, outcome: 'conflict' });
      expect(await admin.markFailed(mine, 'operator said so')).toEqual({ id: mine, outcome: 'applied' });
      expect(await admin.markFailed(mine, 'again')).toEqual({ id: mine, outcome: 'conflict' });
      expect(await app.get(OutboxOperatorService).get(theirs)).toMatchObject({ status: 'FAILED' });
    } finally {
      await app.close();
    }
  });
});
