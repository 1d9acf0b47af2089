import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { isFerryError, type InboxHandlerContext, type PrismaTransactionLike } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import {
  InboxAdminService,
  InboxHandler,
  InboxModule,
  InboxPrivilegedAdminService,
  InboxService,
} from '../src';
import { Events, gate, prismaModule, TestPrismaService, waitFor } from './fixtures';

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
  await t.db.execute('CREATE TABLE effects (consumer text NOT NULL, message_id text NOT NULL)');
});

afterAll(async () => {
  await t.drop();
});

type Context = InboxHandlerContext<PrismaTransactionLike>;

async function recordEffect(context: Context): Promise<void> {
  await context.tx.$executeRawUnsafe(
    'INSERT INTO effects (consumer, message_id) VALUES ($1, $2)',
    context.consumer,
    context.messageId,
  );
}

@Injectable()
class OrderHandlers {
  @InboxHandler('orders.projection')
  async project(_payload: Readonly<Record<string, unknown>>, context: Context): Promise<void> {
    await recordEffect(context);
  }
}

@Injectable()
class BillingHandler {
  async handle(_payload: Readonly<Record<string, unknown>>, context: Context): Promise<void> {
    await recordEffect(context);
  }
}

const fastWorker = { enabled: true, pollIntervalMs: 20 };

async function statusOf(app: TestingModule, tenantId: string, id: string): Promise<string | undefined> {
  return (await app.get(InboxAdminService).forTenant(tenantId).get(id))?.status;
}

describe('InboxModule', () => {
  it('processes handlers registered by decorator and by provider token with the worker started on init', async () => {
    const app = await Test.createTestingModule({
      imports: [
        InboxModule.forRoot({
          prisma: TestPrismaService,
          imports: [prismaModule(t.newClient(), new Events(), true)],
          handlers: { 'billing.charge': BillingHandler },
          worker: fastWorker,
        }),
      ],
      providers: [OrderHandlers, BillingHandler],
    }).compile();
    await app.init();
    try {
      const inbox = app.get(InboxService);
      expect(inbox.inbox.options.worker.consumers).toEqual(
        expect.arrayContaining(['orders.projection', 'billing.charge']),
      );
      const results = await inbox.acceptMany([
        { consumer: 'orders.projection', messageId: 'm-1', tenantId: 'tenant-a', payload: { n: 1 } },
        { consumer: 'billing.charge', messageId: 'm-2', tenantId: 'tenant-a', payload: { n: 2 } },
      ]);
      const ids = results.map((r) => (r.kind === 'accepted' ? r.id : ''));
      for (const id of ids) {
        await waitFor(async () => (await statusOf(app, 'tenant-a', id)) === 'COMPLETED', 'completion');
      }
      const effects = await t.db.query<{ consumer: string }>(
        'SELECT consumer FROM effects ORDER BY consumer',
      );
      expect(effects.map((e) => e.consumer)).toEqual(['billing.charge', 'orders.projection']);
    } finally {
      await app.close();
    }
  });

  it('fails acceptance before module init with a typed FerryError', async () => {
    const app = await Test.createTestingModule({
      imports: [InboxModule.forRoot({ prisma: TestPrismaService, imports: [prismaModule(t.newClient())] })],
    }).compile();
    const inbox = app.get(InboxService);
    const error: unknown = await inbox
      .acceptMany([{ consumer: 'x', messageId: 'm', tenantId: 't', payload: {} }])
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(isFerryError(error, 'FERRY_CLOSED')).toBe(true);
    expect((error as Error).message).toContain('not initialized');
  });

  it('does not register the privileged admin unless enabled', async () => {
    const app = await Test.createTestingModule({
      imports: [InboxModule.forRoot({ prisma: TestPrismaService, imports: [prismaModule(t.newClient())] })],
    }).compile();
    expect(app.get(InboxAdminService)).toBeInstanceOf(InboxAdminService);
    expect(() => app.get(InboxPrivilegedAdminService)).toThrow();
    expect(() => app.get(InboxPrivilegedAdminService, { strict: false })).toThrow();
  });

  it('registers the privileged admin with a top-level privilegedAdmin: true in forRootAsync', async () => {
    const app = await Test.createTestingModule({
      imports: [
        InboxModule.forRootAsync({
          prisma: TestPrismaService,
          privilegedAdmin: true,
          imports: [prismaModule(t.newClient())],
          useFactory: () => ({ maxPayloadBytes: 1_024 }),
        }),
      ],
    }).compile();
    await app.init();
    try {
      const privileged = app.get(InboxPrivilegedAdminService);
      expect((await privileged.stats()).counts).toBeDefined();
      expect(app.get(InboxService).maxPayloadBytes).toBe(1_024);
    } finally {
      await app.close();
    }
  });

  it.each(['privilegedAdmin', 'global', 'handlers', 'prisma'])(
    'rejects a forRootAsync factory result containing %s',
    async (key) => {
      const build = Test.createTestingModule({
        imports: [
          InboxModule.forRootAsync({
            prisma: TestPrismaService,
            imports: [prismaModule(t.newClient())],
            useFactory: () => ({ [key]: key === 'global' ? 'shared' : true }) as object,
          }),
        ],
      }).compile();
      await expect(build).rejects.toMatchObject({
        code: 'FERRY_CONFIG_INVALID',
        option: key,
        message: expect.stringContaining('must be a top-level InboxModule.forRootAsync option'),
      });
    },
  );

  it('surfaces invalid worker options at module init', async () => {
    const app = await Test.createTestingModule({
      imports: [
        InboxModule.forRootAsync({
          prisma: TestPrismaService,
          imports: [prismaModule(t.newClient())],
          useFactory: async () => ({ worker: { concurrency: 0 } }),
        }),
      ],
    }).compile();
    await expect(app.init()).rejects.toMatchObject({
      code: 'FERRY_CONFIG_INVALID',
      option: 'worker.concurrency',
    });
  });

  // On main such a provider was registered without its parse (a schema object under `parse`, a
  // misspelt method): every payload reached handle() unchecked. The core refuses the same handler
  // given directly (handlers: { c: { parse: 'v2', handle } }).
  it('refuses a handler provider whose parse is not a function at module init', async () => {
    @Injectable()
    class SchemaHandler {
      readonly parse = { safeParse: () => ({ success: true }) };
      async handle(): Promise<void> {}
    }
    const app = await Test.createTestingModule({
      imports: [
        InboxModule.forRoot({
          prisma: TestPrismaService,
          imports: [prismaModule(t.newClient())],
          handlers: { 'billing.schema': SchemaHandler },
          worker: fastWorker,
        }),
      ],
      providers: [SchemaHandler],
    }).compile();
    await expect(app.init()).rejects.toMatchObject({
      code: 'FERRY_CONFIG_INVALID',
      option: 'handlers.billing.schema',
      message: expect.stringContaining('parse'),
    });
  });

  it('rejects an enabled worker without handlers at module init', async () => {
    const app = await Test.createTestingModule({
      imports: [
        InboxModule.forRoot({
          prisma: TestPrismaService,
          imports: [prismaModule(t.newClient())],
          worker: fastWorker,
        }),
      ],
    }).compile();
    await expect(app.init()).rejects.toMatchObject({
      code: 'FERRY_CONFIG_INVALID',
      option: 'worker.consumers',
    });
  });
});

describe('InboxModule shutdown', () => {
  it.each([
    ['imported by the inbox module', false],
    ['global', true],
  ])(
    'drains an in-flight handler before a PrismaModule (%s) disconnects in its onModuleDestroy',
    async (_label, global) => {
      const events = new Events();
      const held = gate();
      const started = gate();

      @Injectable()
      class SlowHandler {
        @InboxHandler('slow.consumer')
        async handle(_payload: Readonly<Record<string, unknown>>, context: Context): Promise<void> {
          started.open();
          await held.promise;
          await recordEffect(context);
          events.log.push('handler:finished');
        }
      }

      const app = await Test.createTestingModule({
        imports: [
          InboxModule.forRoot({
            prisma: TestPrismaService,
            imports: global ? [] : [prismaModule(t.newClient(), events)],
            worker: fastWorker,
          }),
          ...(global ? [prismaModule(t.newClient(), events, true)] : []),
        ],
        providers: [SlowHandler],
      }).compile();
      // A standalone application context; an HTTP application closes through the same hooks.
      const nest = app.enableShutdownHooks();
      await nest.init();
      const inbox = nest.get(InboxService);
      const receipt = await inbox.accept({
        consumer: 'slow.consumer',
        messageId: `slow-${String(global)}`,
        tenantId: 'tenant-a',
        payload: {},
      });
      await started.promise;

      const closing = nest.close();
      await waitFor(() => inbox.state === 'closing', 'the inbox to start draining');
      expect(events.log).toEqual([]);
      held.open();
      await closing;

      expect(events.log).toEqual(['handler:finished', 'prisma:disconnect']);
      const rows = await t.db.query<{ message_id: string }>(
        'SELECT message_id FROM effects WHERE message_id = $1',
        [`slow-${String(global)}`],
      );
      expect(rows).toHaveLength(1);
      const admin = await t.db.query<{ status: string }>(
        `SELECT status FROM ferry_inbox_receipts WHERE id = $1`,
        [receipt.record.id],
      );
      expect(admin[0]?.status).toBe('COMPLETED');
    },
  );
});
