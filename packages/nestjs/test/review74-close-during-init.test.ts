/**
 * Review 74 (failing first): @ferry/nestjs closed while the application is still initializing.
 *
 * NestJS 11's NestApplicationContext.close() waits for a running init(), but NestApplication (every
 * HTTP app: NestFactory.create(AppModule)) overrides init() and sets no initialization promise, so
 * app.close() during listen() / init() runs the destroy hooks at once, beside the init still in
 * progress: e.g. while the application's PrismaService.onModuleInit() is still connecting.
 * OutboxRelayService then refuses to start (core's relay: FERRY_CLOSED once closed); InboxService
 * does not: close() before its onModuleInit() is a no-op that is forgotten, and the init that
 * continues creates the inbox and starts its worker after app.close() resolved and the Prisma
 * client was disconnected.
 */
import 'reflect-metadata';
import { Injectable, Module, type OnModuleInit } from '@nestjs/common';
import { AbstractHttpAdapter, NestFactory } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type { InboxHandlerContext, PrismaTransactionLike } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { InboxHandler, InboxModule, InboxService } from '../src';
import { Events, gate, prismaModule, TestPrismaService } from './fixtures';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/**
 * The smallest HTTP adapter NestFactory.create() takes (no server, no routes): what makes the
 * application a NestApplication, whose init() app.close() does not wait for.
 */
class NoServerAdapter extends AbstractHttpAdapter {
  constructor() {
    super({});
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
  initHttpServer(): void {
    this.httpServer = { once: () => undefined, on: () => undefined, address: () => null };
  }
  useStaticAssets(): void {}
  setViewEngine(): void {}
  getRequestHostname(): void {}
  getRequestMethod(): void {}
  getRequestUrl(): void {}
  status(): void {}
  reply(): void {}
  end(): void {}
  render(): void {}
  redirect(): void {}
  setErrorHandler(): void {}
  setNotFoundHandler(): void {}
  isHeadersSent(): void {}
  getHeader(): void {}
  setHeader(): void {}
  appendHeader(): void {}
  registerParserMiddleware(): void {}
  enableCors(): void {}
  createMiddlewareFactory(): () => undefined {
    return () => undefined;
  }
  getType(): string {
    return 'none';
  }
  applyVersionFilter(): () => () => undefined {
    return () => () => undefined;
  }
}

@Injectable()
class Tally {
  @InboxHandler('review74.tally')
  async count(): Promise<void> {}
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('review74: InboxService closed before its module initialized', () => {
  // User: an HTTP Nest application as the README's quick start builds it (NestFactory.create),
  // whose PrismaService connects in onModuleInit (Prisma's documented NestJS recipe). The
  // application is closed while it is still starting (app.close() from a start-up watchdog, a
  // test harness, an orchestrator hook) — here while PrismaService.onModuleInit() is connecting.
  // Contract (spec 002: "close() stops the worker"; README InboxModule: the worker "drains on
  // module destroy", "Once InboxService is being destroyed, its accept, acceptMany and
  // acceptDetailed reject with FERRY_CLOSED ... rather than writing through a Prisma client the
  // application disconnects next"; OutboxRelayService in the same situation refuses to start).
  // Instead: app.close() resolves (Prisma disconnected), then the init that goes on creates the
  // inbox and starts its worker: InboxService.state is 'running', acceptance succeeds, and the
  // handler runs and commits through the disconnected client (Prisma reconnects), with nothing
  // left to close it: the process never ends. InboxService.close() returns at once while
  // `current` is undefined and is not remembered (inbox.services.ts, close / onModuleInit).
  it('does not start the worker or accept after app.close() ran during init', async () => {
    const connecting = gate();
    const connected = gate();
    const events = new Events();
    const client = t.newClient();

    @Injectable()
    class ConnectingPrisma extends TestPrismaService implements OnModuleInit {
      constructor() {
        super(client, events);
      }
      async onModuleInit(): Promise<void> {
        connecting.open();
        await connected.promise; // `await this.$connect()` against a slow database
      }
    }
    @Module({
      providers: [{ provide: TestPrismaService, useClass: ConnectingPrisma }],
      exports: [TestPrismaService],
    })
    class PrismaModule {}

    const handled: string[] = [];
    @Injectable()
    class Projection {
      @InboxHandler('review74.projection')
      async project(_payload: unknown, context: InboxHandlerContext<PrismaTransactionLike>): Promise<void> {
        handled.push(context.messageId);
      }
    }
    @Module({
      imports: [
        InboxModule.forRoot({
          prisma: TestPrismaService,
          imports: [PrismaModule],
          worker: { enabled: true, pollIntervalMs: 20 },
        }),
      ],
      providers: [Projection],
    })
    class AppModule {}

    const app = await NestFactory.create(AppModule, new NoServerAdapter(), {
      logger: false,
      bodyParser: false,
      abortOnError: false,
    });
    const inbox = app.get(InboxService);
    const init = app.init().then(
      () => 'initialized',
      (error: unknown) => error,
    );
    try {
      await connecting.promise;
      await app.close();
      expect(events.log).toEqual(['prisma:disconnect']);
      connected.open();
      await init; // resolves or rejects (e.g. FERRY_CLOSED): either way nothing may run now

      const state = inbox.state;
      const accepted = await inbox
        .accept({ consumer: 'review74.projection', messageId: 'after-close', tenantId: 'acme', payload: {} })
        .then(
          () => 'accepted',
          (error: unknown) => (error as { code?: string }).code ?? String(error),
        );
      await settle(300); // several poll intervals
      expect({ state, accepted, handled }).toEqual({
        state: expect.not.stringMatching(/^running$/) as unknown,
        accepted: 'FERRY_CLOSED',
        handled: [],
      });
    } finally {
      connected.open();
      await inbox.close();
      await client.$disconnect();
    }
  });

  // The same hole without an HTTP application: the README's way out of a failed start ("close
  // ferry's services yourself: await app.get(InboxService).onModuleDestroy() ... safe to call
  // again") is forgotten when it runs before the module initialized, and a later init() starts
  // the worker of a service that was closed.
  it('keeps a service closed before module init closed when the module initializes', async () => {
    const app = await Test.createTestingModule({
      imports: [
        InboxModule.forRoot({
          prisma: TestPrismaService,
          imports: [prismaModule(t.newClient())],
          worker: { enabled: true, pollIntervalMs: 20 },
        }),
      ],
      providers: [Tally],
    }).compile();
    const inbox = app.get(InboxService);
    await inbox.onModuleDestroy();
    const init = await app.init().then(
      () => 'initialized',
      (error: unknown) => (error as { code?: string }).code ?? String(error),
    );
    try {
      // init may refuse (FERRY_CLOSED) or go on without the worker; the worker must not run.
      expect(['initialized', 'FERRY_CLOSED']).toContain(init);
      expect(inbox.state).toBe('closed');
      expect(inbox.inbox.state).not.toBe('running');
    } finally {
      await inbox.close();
      await app.get(TestPrismaService).onModuleDestroy();
    }
  });
});
