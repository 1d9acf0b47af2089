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
import {
  Injectable,
  Module,
  type DynamicModule,
  type INestApplication,
  type OnModuleInit,
  type Type,
} from '@nestjs/common';
import { AbstractHttpAdapter, NestFactory } from '@nestjs/core';
import { Test, type TestingModule } from '@nestjs/testing';
import { createEmitter, type InboxHandlerContext, type PrismaTransactionLike } from '@ferry/core';
import { InMemoryBroker, attachInMemoryConsumer } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { readyOutcome } from '../../../test-support/lifecycle';
import {
  FerryHealthIndicator,
  InboxHandler,
  InboxModule,
  InboxService,
  OutboxModule,
  OutboxRelayService,
} from '../src';
import { Events, gate, MemoryPublisher, prismaModule, TestPrismaService } from './fixtures';

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

/** How a call ended: 'ready' (it resolved), or the code of the FerryError it rejected with. */
function outcomeOf(work: () => Promise<unknown>): Promise<string> {
  return readyOutcome(
    Promise.resolve()
      .then(work)
      .then(() => undefined),
  );
}

/** The application of the InboxService tests: an enabled worker polling every 20 ms, one handler. */
function inboxApp(client: { $disconnect(): Promise<void> }): Promise<TestingModule> {
  return Test.createTestingModule({
    imports: [
      InboxModule.forRoot({
        prisma: TestPrismaService,
        imports: [prismaModule(client)],
        worker: { enabled: true, pollIntervalMs: 20 },
      }),
    ],
    providers: [Tally],
  }).compile();
}

/** What a synchronous call threw ('returned' when it did not). */
function thrownBy(call: () => unknown): string {
  try {
    call();
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
  return 'returned';
}

/**
 * A PrismaModule whose PrismaService connects in onModuleInit (Prisma's NestJS recipe) until
 * `connected` opens: an application closed while it starts.
 */
function connectingPrismaModule(
  client: { $disconnect(): Promise<void> },
  events: Events,
  connecting: { open(): void },
  connected: { promise: Promise<void> },
): DynamicModule {
  @Injectable()
  class ConnectingPrisma extends TestPrismaService implements OnModuleInit {
    constructor() {
      super(client, events);
    }
    async onModuleInit(): Promise<void> {
      connecting.open();
      await connected.promise;
    }
  }
  @Module({})
  class PrismaModule {}
  return {
    module: PrismaModule,
    providers: [{ provide: TestPrismaService, useClass: ConnectingPrisma }],
    exports: [TestPrismaService],
  };
}

/** An HTTP Nest application (NestFactory.create): the one whose init() app.close() does not wait for. */
function httpApp(module: Type<unknown>): Promise<INestApplication> {
  return NestFactory.create(module, new NoServerAdapter(), {
    logger: false,
    bodyParser: false,
    abortOnError: false,
  });
}

describe('review74, the class: every ferry service with a lifecycle remembers a close that came first', () => {
  // User: the same application closed while it starts, with the outbox relay. Contract: the relay
  // starts on bootstrap and drains on destroy (README); once closed it never starts, runOnce()
  // rejects FERRY_CLOSED, and an event emitted afterwards is not published.
  it('OutboxRelayService closed during an HTTP app init never starts its relay', async () => {
    const connecting = gate();
    const connected = gate();
    const client = t.newClient();
    const publisher = new MemoryPublisher();
    @Module({
      imports: [
        OutboxModule.forRoot({
          prisma: TestPrismaService,
          imports: [connectingPrismaModule(client, new Events(), connecting, connected)],
          publisher,
          pollInterval: 20,
        }),
      ],
    })
    class AppModule {}
    const app = await httpApp(AppModule);
    const relay = app.get(OutboxRelayService);
    const init = outcomeOf(() => app.init());
    try {
      await connecting.promise;
      await app.close();
      connected.open();
      const initialized = await init;
      await t.db.transaction((tx) =>
        createEmitter().emit(tx, { type: 'review74.relayed', payload: {}, tenantId: 'acme' }),
      );
      const runOnce = await outcomeOf(() => relay.runOnce());
      await settle(300); // several poll intervals
      expect({ initialized, state: relay.relay?.state, runOnce, delivered: publisher.delivered }).toEqual({
        initialized: 'FERRY_CLOSED',
        state: 'closed',
        runOnce: 'FERRY_CLOSED',
        delivered: [],
      });
    } finally {
      connected.open();
      await relay.onModuleDestroy();
      await client.$disconnect();
    }
  });

  // User: the README's way out of a failed start (close ferry's services yourself), before the
  // module initialized, then an init: with a relay and without one (no publisher). Contract: one
  // rule for every ferry service, a service closed first refuses to start (FERRY_CLOSED).
  it.each([
    ['with a relay', true],
    ['without a relay (no publisher)', false],
  ])('OutboxRelayService closed before module init refuses to bootstrap (%s)', async (_name, relayed) => {
    const client = t.newClient();
    const app = await Test.createTestingModule({
      imports: [
        OutboxModule.forRoot({
          prisma: TestPrismaService,
          imports: [prismaModule(client)],
          ...(relayed ? { publisher: new MemoryPublisher() } : {}),
          pollInterval: 20,
        }),
      ],
    }).compile();
    const relay = app.get(OutboxRelayService);
    try {
      await relay.onModuleDestroy();
      const initialized = await outcomeOf(() => app.init());
      expect({ initialized, state: relay.relay?.state }).toEqual({
        initialized: 'FERRY_CLOSED',
        state: relayed ? 'closed' : undefined,
      });
    } finally {
      await relay.onModuleDestroy();
      await client.$disconnect();
    }
  });

  // User: an HTTP application closed while the inbox checks the schema in onApplicationBootstrap
  // (a slow database). Contract: a close that arrives while the init awaits wins: the init, when
  // it resumes, issues no further statement through the client the application disconnected
  // (Prisma would reconnect, and the process would not end), starts no worker, and the service
  // reports closed.
  it('InboxService closed while its bootstrap checks the schema: nothing more runs', async () => {
    const client = t.newClient();
    const reached = gate();
    const release = gate();
    let held = false;
    let closed = false;
    const afterClose: string[] = [];
    /** The client, its first statement held until `release` opens; what runs after close() is recorded. */
    const pass =
      <A extends unknown[], R>(name: string, call: (...args: A) => Promise<R>) =>
      async (...args: A): Promise<R> => {
        if (closed) afterClose.push(typeof args[0] === 'string' ? args[0] : name);
        if (!held) {
          held = true;
          reached.open();
          await release.promise;
        }
        return call(...args);
      };
    const holding = {
      $queryRawUnsafe: pass('$queryRawUnsafe', (q: string, ...v: unknown[]) =>
        client.$queryRawUnsafe(q, ...v),
      ),
      $executeRawUnsafe: pass('$executeRawUnsafe', (q: string, ...v: unknown[]) =>
        client.$executeRawUnsafe(q, ...v),
      ),
      $transaction: pass('$transaction', (...args: unknown[]) =>
        (client.$transaction as (...a: unknown[]) => Promise<unknown>)(...args),
      ),
      $disconnect: () => client.$disconnect(),
    };
    @Module({
      imports: [
        InboxModule.forRoot({
          prisma: TestPrismaService,
          imports: [prismaModule(holding)],
          worker: { enabled: true, pollIntervalMs: 20 },
        }),
      ],
      providers: [Tally],
    })
    class AppModule {}
    const app = await httpApp(AppModule);
    const inbox = app.get(InboxService);
    const init = outcomeOf(() => app.init());
    try {
      await reached.promise;
      await app.close();
      closed = true;
      release.open();
      const initialized = await init;
      await settle(300);
      expect({ initialized, afterClose, state: inbox.state, worker: inbox.inbox.state }).toEqual({
        initialized: 'FERRY_CLOSED',
        afterClose: [],
        state: 'closed',
        worker: 'closed',
      });
    } finally {
      release.open();
      await inbox.close();
      await client.$disconnect();
    }
  });

  // User: closes InboxService before module init (the README's way out), then something still
  // drives it: runOnce() from a test harness, start(), a transport attached, a health probe.
  // Contract: FERRY_CLOSED for every call that would run something; health reports the worker
  // down as closed, never a thrown error.
  it('InboxService closed before module init: runOnce, start and a transport attach refuse; health says closed', async () => {
    const client = t.newClient();
    const app = await inboxApp(client);
    const inbox = app.get(InboxService);
    const broker = new InMemoryBroker();
    broker.declareQueue('tally');
    try {
      await inbox.onModuleDestroy();
      const initialized = await outcomeOf(() => app.init());
      const indicator = FerryHealthIndicator.create({ db: t.db, inbox });
      const health = await indicator.isHealthy('ferry', 'liveness');
      expect({
        initialized,
        runOnce: await outcomeOf(() => inbox.runOnce()),
        start: thrownBy(() => inbox.start()),
        attach: thrownBy(() =>
          attachInMemoryConsumer(inbox, { broker, queue: 'tally', consumer: 'review74.tally' }),
        ),
        initialize: await outcomeOf(() => inbox.initialize()),
        state: inbox.state,
        health,
      }).toEqual({
        initialized: 'FERRY_CLOSED',
        runOnce: 'FERRY_CLOSED',
        start: 'FERRY_CLOSED',
        attach: 'FERRY_CLOSED',
        initialize: 'FERRY_CLOSED',
        state: 'closed',
        health: {
          ferry: {
            status: 'down',
            checks: [
              expect.objectContaining({ name: 'inbox worker', status: 'down', detail: 'state closed' }),
            ],
          },
        },
      });
    } finally {
      await inbox.close();
      await client.$disconnect();
    }
  });

  // User: a transport consumer attached (or re-attached) after app.close() began. Contract
  // (README): once InboxService is being destroyed acceptance stops with FERRY_CLOSED; an attach
  // then is refused at once instead of consuming deliveries it can never accept.
  it('InboxService closed after init refuses a transport attach with FERRY_CLOSED', async () => {
    const client = t.newClient();
    const app = await inboxApp(client);
    await app.init();
    const inbox = app.get(InboxService);
    const broker = new InMemoryBroker();
    broker.declareQueue('tally');
    await app.close();
    expect(
      thrownBy(() => attachInMemoryConsumer(inbox, { broker, queue: 'tally', consumer: 'review74.tally' })),
    ).toBe('FERRY_CLOSED');
  });
});

describe('review74: spec 002 initialize(), and InboxService.state is the inbox worker state', () => {
  // User: explicit bounded execution as spec 002 says it: "InboxService.initialize() checks the
  // schema, runOnce() processes a batch, and close() stops the worker"; or the core inbox driven
  // directly (inboxService.inbox.initialize() / start() / close()). Contract: the service has
  // initialize(), and its state (and so health) is the worker's real state. Instead:
  // initialize() exists only on the core inbox, and the worker started there leaves
  // InboxService.state at 'ready' (health: not started / disabled).
  it('InboxService.initialize() exists and state follows the core inbox, however it is driven', async () => {
    const client = t.newClient();
    const app = await inboxApp(client);
    const inbox = app.get(InboxService);
    const indicator = FerryHealthIndicator.create({ db: t.db, inbox });
    try {
      await inbox.onModuleInit(); // the module's init, without bootstrap
      const ready = inbox.state;
      await inbox.inbox.initialize(); // worker.enabled: starts the worker
      const started = inbox.state;
      await settle(100);
      const live = (await indicator.isHealthy('ferry', 'liveness'))['ferry']?.status;
      await inbox.inbox.close();
      const closed = inbox.state;
      const accepted = await outcomeOf(() =>
        inbox.accept({ consumer: 'review74.tally', messageId: 'spec002', tenantId: 'acme', payload: {} }),
      );
      expect({
        initialize: typeof inbox.initialize,
        ready,
        started,
        live,
        closed,
        accepted,
      }).toEqual({
        initialize: 'function',
        ready: 'ready',
        started: 'running',
        live: 'up',
        closed: 'closed',
        accepted: 'FERRY_CLOSED',
      });
    } finally {
      await inbox.close();
      await client.$disconnect();
    }
  });
});
