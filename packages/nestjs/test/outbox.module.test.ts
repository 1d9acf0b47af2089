import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { FerryConfigError, interactiveTransaction, isFerryError, type PrismaClientLike } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import {
  InboxModule,
  OutboxEmitter,
  OutboxModule,
  OutboxOperatorService,
  OutboxRelayService,
  OutboxTenantAdminService,
} from '../src';
import { MemoryPublisher, prismaModule, TestPrismaService, waitFor } from './fixtures';

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});

afterAll(async () => {
  await t.drop();
});

async function statusOf(id: string): Promise<string | undefined> {
  const rows = await t.db.query<{ status: string }>('SELECT status FROM outbox_events WHERE id = $1', [id]);
  return rows[0]?.status;
}

describe('OutboxModule.forRoot', () => {
  it('emits in the application transaction, relays it on bootstrap and marks it SENT', async () => {
    const publisher = new MemoryPublisher();
    const app = await Test.createTestingModule({
      imports: [
        OutboxModule.forRoot({
          prisma: TestPrismaService,
          imports: [prismaModule(t.newClient())],
          publisher,
          pollInterval: 20,
          retry: { maxRetries: 3 },
        }),
      ],
    }).compile();
    await app.init();
    try {
      const emitter = app.get(OutboxEmitter);
      const prisma = app.get(TestPrismaService) as unknown as PrismaClientLike;
      const { id } = await interactiveTransaction(prisma, (tx) =>
        emitter.emit(tx, { type: 'order.created', payload: { orderId: 1 }, tenantId: 'tenant-a' }),
      );
      await waitFor(async () => (await statusOf(id)) === 'SENT', 'the event to be SENT');
      expect(publisher.delivered.map((m) => m.id)).toEqual([id]);

      const operator = app.get(OutboxOperatorService);
      expect((await operator.get(id))?.maxRetries).toBe(3);
      const tenantAdmin = app.get(OutboxTenantAdminService);
      expect((await tenantAdmin.forTenant('tenant-a').get(id))?.status).toBe('SENT');
      expect(await tenantAdmin.forTenant('tenant-b').get(id)).toBeNull();
    } finally {
      await app.close();
    }
    expect(app.get(OutboxRelayService).relay?.state).toBe('closed');
  });

  it('runs no relay without a publisher', async () => {
    const app = await Test.createTestingModule({
      imports: [OutboxModule.forRoot({ prisma: TestPrismaService, imports: [prismaModule(t.newClient())] })],
    }).compile();
    await app.init();
    expect(app.get(OutboxRelayService).relay).toBeUndefined();
    await app.close();
  });

  it('surfaces an invalid option at module init as FerryConfigError naming it', async () => {
    const build = Test.createTestingModule({
      imports: [
        OutboxModule.forRoot({
          prisma: TestPrismaService,
          imports: [prismaModule(t.newClient())],
          lease: { duration: 1_000, heartbeatInterval: 600 },
        }),
      ],
    }).compile();
    await expect(build).rejects.toMatchObject({
      code: 'FERRY_CONFIG_INVALID',
      option: 'lease.heartbeatInterval',
    });
  });

  it('rejects an unknown option', async () => {
    const build = Test.createTestingModule({
      imports: [
        OutboxModule.forRoot({
          prisma: TestPrismaService,
          imports: [prismaModule(t.newClient())],
          ...({ retries: 3 } as object),
        }),
      ],
    }).compile();
    await expect(build).rejects.toMatchObject({ code: 'FERRY_CONFIG_INVALID', option: 'retries' });
  });

  it('requires the prisma token', () => {
    expect(() => OutboxModule.forRoot({} as never)).toThrow(FerryConfigError);
  });

  it('refuses its options left out or null, naming them, not with a TypeError', () => {
    for (const options of [undefined, null, 'prisma']) {
      expect(() => OutboxModule.forRoot(options as never)).toThrow(
        expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option: 'options' }),
      );
      expect(() => OutboxModule.forRootAsync(options as never)).toThrow(
        expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option: 'options' }),
      );
      expect(() => InboxModule.forRoot(options as never)).toThrow(
        expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option: 'options' }),
      );
      expect(() => InboxModule.forRootAsync(options as never)).toThrow(
        expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option: 'options' }),
      );
    }
  });
});

describe('OutboxModule.forRootAsync', () => {
  const PUBLISHER = Symbol('publisher');

  it('takes the publisher token at the top level and the settings from the factory', async () => {
    const publisher = new MemoryPublisher();
    @Module({ providers: [{ provide: PUBLISHER, useValue: publisher }], exports: [PUBLISHER] })
    class BrokerModule {}
    const app = await Test.createTestingModule({
      imports: [
        OutboxModule.forRootAsync({
          prisma: TestPrismaService,
          publisher: PUBLISHER,
          imports: [prismaModule(t.newClient()), BrokerModule],
          inject: [PUBLISHER],
          useFactory: (p: MemoryPublisher) => ({ pollInterval: p ? 20 : 1_000 }),
        }),
      ],
    }).compile();
    await app.init();
    try {
      const prisma = app.get(TestPrismaService) as unknown as PrismaClientLike;
      const { id } = await interactiveTransaction(prisma, (tx) =>
        app.get(OutboxEmitter).emit(tx, { type: 'order.paid', payload: { orderId: 2 } }),
      );
      await waitFor(async () => (await statusOf(id)) === 'SENT', 'the event to be SENT');
      expect(publisher.delivered.map((m) => m.id)).toEqual([id]);
    } finally {
      await app.close();
    }
  });

  it.each(['publisher', 'prisma', 'imports', 'global', 'privilegedAdmin'])(
    'rejects a factory result containing %s, naming it as a top-level option',
    async (key) => {
      const build = Test.createTestingModule({
        imports: [
          OutboxModule.forRootAsync({
            prisma: TestPrismaService,
            imports: [prismaModule(t.newClient())],
            useFactory: () => ({ [key]: key === 'publisher' ? new MemoryPublisher() : true }),
          }),
        ],
      }).compile();
      const error: unknown = await build.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isFerryError(error, 'FERRY_CONFIG_INVALID')).toBe(true);
      expect(error).toMatchObject({ option: key });
      expect((error as Error).message).toContain('must be a top-level OutboxModule.forRootAsync option');
    },
  );

  it('validates the factory result like forRoot options', async () => {
    const build = Test.createTestingModule({
      imports: [
        OutboxModule.forRootAsync({
          prisma: TestPrismaService,
          imports: [prismaModule(t.newClient())],
          useFactory: async () => ({ retry: { backoff: 'linear' as never } }),
        }),
      ],
    }).compile();
    await expect(build).rejects.toMatchObject({ code: 'FERRY_CONFIG_INVALID', option: 'retry.backoff' });
  });
});
