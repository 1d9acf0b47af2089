/**
 * Review 63 (failing first): @ferry/nestjs wired as a NestJS user would, from the README: handler
 * discovery by decorator (scopes, decorators the discovery drops), the registration and settings
 * options a Nest user gets wrong, and the health indicator of an acceptance-only application.
 */
import 'reflect-metadata';
import { Injectable, Logger, Scope, type DynamicModule, type InjectionToken } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { isFerryError } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import {
  FerryHealthIndicator,
  InboxAdminService,
  InboxHandler,
  InboxModule,
  InboxService,
  OutboxModule,
  OutboxRelayService,
} from '../src';
import {
  MemoryPublisher,
  prismaModule,
  TestPrismaService,
  UNREACHABLE_PRISMA as PRISMA,
  UnreachablePrismaModule as FakePrismaModule,
  waitFor,
} from './fixtures';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** What `work` ended with: 'ok', the FerryError's code, or the other error's name and message. */
async function outcomeOf(work: () => Promise<unknown>): Promise<string> {
  return work().then(
    () => 'ok',
    (error: unknown) =>
      isFerryError(error)
        ? error.code
        : error instanceof Error
          ? `${error.name}: ${error.message}`
          : String(error),
  );
}

/** The FerryConfigError's option `work` failed with, or what it ended with otherwise. */
async function configOptionOf(work: () => Promise<unknown>): Promise<string> {
  return work().then(
    () => 'ok',
    (error: unknown) =>
      isFerryError(error, 'FERRY_CONFIG_INVALID')
        ? `FERRY_CONFIG_INVALID ${(error as { option?: string }).option ?? ''}`
        : error instanceof Error
          ? `${error.name}: ${error.message}`
          : String(error),
  );
}

describe('review63: @InboxHandler on a transient provider', () => {
  // User: marks the class holding a handler `@Injectable({ scope: Scope.TRANSIENT })` (a common
  // habit for stateful services) and injects a dependency the handler uses.
  // Contract (README InboxModule): handlers live "on a method of any singleton provider or
  // controller"; a request-scoped one fails module init with FerryConfigError ("inbox handlers
  // must live on singleton (default-scoped) providers").
  // Instead: a transient provider passes wrapper.isDependencyTreeStatic(), and the "instance" the
  // discovery binds the handler to is Nest's Object.create(prototype) placeholder, whose
  // constructor never ran: the handler runs with every injected dependency undefined, and here
  // (a handler that does not touch it) the receipt is COMPLETED with nothing done.
  it('refuses it at module init, or runs the handler on a constructed instance', async () => {
    const seen: unknown[] = [];
    @Injectable()
    class Dependency {
      readonly value = 42;
    }
    @Injectable({ scope: Scope.TRANSIENT })
    class TransientHandlers {
      constructor(private readonly dependency: Dependency) {}
      @InboxHandler('review63.transient')
      async project(): Promise<void> {
        seen.push(this.dependency?.value);
      }
    }
    const app = await Test.createTestingModule({
      imports: [
        InboxModule.forRoot({
          prisma: TestPrismaService,
          imports: [prismaModule(t.newClient())],
          worker: { enabled: true, pollIntervalMs: 20 },
        }),
      ],
      providers: [TransientHandlers, Dependency],
    }).compile();
    const init = await outcomeOf(() => app.init());
    try {
      if (init === 'ok') {
        const { record } = await app.get(InboxService).accept({
          consumer: 'review63.transient',
          messageId: 'transient-1',
          tenantId: 'tenant-a',
          payload: {},
        });
        const scope = app.get(InboxAdminService).forTenant('tenant-a');
        await waitFor(
          async () => ['COMPLETED', 'DEAD'].includes((await scope.get(record.id))?.status ?? ''),
          'the receipt to finish',
        );
      }
    } finally {
      // fix63: Nest 11's close() rethrows a failed init (README "Shutdown order"): the refusal branch could not pass.
      await app.close().catch((error: unknown) => (init === 'ok' ? Promise.reject(error) : undefined));
    }
    const outcome = init === 'ok' ? { handlerSawItsDependency: seen } : { init };
    expect([{ init: 'FERRY_CONFIG_INVALID' }, { handlerSawItsDependency: [42] }]).toContainEqual(outcome);
  });
});

describe('review63: @InboxHandler decorations the discovery drops silently', () => {
  // User: one method serves two consumers (a v1 and a v2 queue during a migration) and carries
  // two decorators; or the handler is a static method.
  // Contract (README InboxModule): "@InboxHandler('consumer.name') on a method ... discovered with
  // Nest's DiscoveryService at module init"; a registration problem fails module init.
  // Instead: SetMetadata keeps only the outermost decorator's consumer, so `orders.v1` has no
  // handler and nothing says so at init (a transport attached for it fails later, deliveries
  // through InboxService are refused as FERRY_HANDLER_MISSING); a static method is never scanned.
  it('registers both consumers of a method decorated twice, or refuses it at module init', async () => {
    @Injectable()
    class Migrating {
      @InboxHandler('review63.orders.v2')
      @InboxHandler('review63.orders.v1')
      async project(): Promise<void> {}
    }
    const app = await Test.createTestingModule({
      imports: [InboxModule.forRoot({ prisma: TestPrismaService, imports: [prismaModule(t.newClient())] })],
      providers: [Migrating],
    }).compile();
    const init = await outcomeOf(() => app.init());
    const outcome = init === 'ok' ? Object.keys(app.get(InboxService).inbox.options.handlers).sort() : init;
    await app.close();
    expect([['review63.orders.v1', 'review63.orders.v2'], 'FERRY_CONFIG_INVALID']).toContainEqual(outcome);
  });

  it('registers a decorated static method, or refuses it at module init', async () => {
    @Injectable()
    class StaticHandlers {
      @InboxHandler('review63.static')
      static async project(): Promise<void> {}
    }
    const app = await Test.createTestingModule({
      imports: [InboxModule.forRoot({ prisma: TestPrismaService, imports: [prismaModule(t.newClient())] })],
      providers: [StaticHandlers],
    }).compile();
    const init = await outcomeOf(() => app.init());
    const outcome = init === 'ok' ? Object.keys(app.get(InboxService).inbox.options.handlers) : init;
    await app.close();
    expect([['review63.static'], 'FERRY_CONFIG_INVALID']).toContainEqual(outcome);
  });
});

describe('review63: @InboxHandler with a consumer name acceptance never takes', () => {
  // User: a generated consumer name (service + queue + version) of 201 characters.
  // Contract: acceptance refuses a consumer over 200 characters (FerryValidationError "consumer is
  // 201 characters; the limit is 200"); a registration that can never receive a message is a
  // configuration error and should fail where configuration is checked (the decorator refuses
  // an empty name with a TypeError; module init with FerryConfigError).
  // Instead: the decorator and module init accept it, InboxService.assertHandles() passes (so a
  // transport attaches), and every delivery for it is answered `invalid`: a transport
  // dead-letters the whole stream.
  it('refuses the name at decoration or at module init', async () => {
    const name = `review63.${'x'.repeat(192)}`;
    expect(name).toHaveLength(201);
    const outcome = await outcomeOf(async () => {
      @Injectable()
      class LongName {
        @InboxHandler(name)
        async project(): Promise<void> {}
      }
      const app = await Test.createTestingModule({
        imports: [
          InboxModule.forRoot({
            prisma: TestPrismaService,
            imports: [prismaModule(t.newClient())],
            worker: { enabled: true, pollIntervalMs: 20 },
          }),
        ],
        providers: [LongName],
      }).compile();
      try {
        await app.init();
      } finally {
        await app.close();
      }
    });
    // Refused: FerryConfigError at module init, or a TypeError from the decorator (as for '').
    const refused = outcome === 'FERRY_CONFIG_INVALID' || outcome.startsWith('TypeError');
    expect(refused ? 'refused' : outcome).toBe('refused');
  });
});

async function initialized(module: () => DynamicModule): Promise<void> {
  const app = await Test.createTestingModule({ imports: [module()] }).compile();
  try {
    await app.init();
  } finally {
    await app.close();
  }
}

describe('review63: handlers: { consumer: token } whose token is undefined', () => {
  // User: `handlers: { 'billing.charge': BillingHandler }` where BillingHandler is undefined at
  // module-definition time (a circular import between the module file and the handler file, the
  // classic Nest pitfall).
  // Contract (README): "An invalid or unknown option fails module initialization with
  // FerryConfigError (code FERRY_CONFIG_INVALID, option naming it)".
  // Instead: Nest's UnknownElementException "Nest could not find given element (this provider
  // does not exist in the current context)", naming neither the option nor the consumer.
  it('fails with FerryConfigError naming handlers.billing.charge', async () => {
    const option = await configOptionOf(() =>
      initialized(() =>
        InboxModule.forRoot({
          prisma: PRISMA,
          imports: [FakePrismaModule],
          handlers: { 'billing.charge': undefined as unknown as InjectionToken },
        }),
      ),
    );
    expect(option).toBe('FERRY_CONFIG_INVALID handlers.billing.charge');
  });
});

describe("review63: Nest's own Logger passed as ferry's logger", () => {
  // User: a Nest application passes its Logger (`logger: new Logger('ferry')`) rather than
  // `fromNestLogger(...)`: Nest's Logger has log / warn / error / debug / verbose but no `info`,
  // and takes (message, context), not (fields, message). Or a string by mistake.
  // Contract (README OutboxModule): "An invalid or unknown option fails module initialization
  // with FerryConfigError"; InboxModule: "Validation is core's resolveInboxOptions, at module
  // init, with FerryConfigError".
  // Instead: neither module checks `logger`; ferry's guardLogger then swallows the TypeError of
  // every `info` call (and a string logger loses every line, relay failures included), silently.
  it.each([
    ['OutboxModule', "Nest's Logger", () => new Logger('ferry')],
    ['OutboxModule', 'a string', () => 'pino'],
    ['InboxModule', "Nest's Logger", () => new Logger('ferry')],
    ['InboxModule', 'a string', () => 'pino'],
  ])('%s refuses %s as logger at module init', async (moduleName, _what, logger) => {
    const option = await configOptionOf(() =>
      initialized(() =>
        moduleName === 'OutboxModule'
          ? OutboxModule.forRoot({
              prisma: PRISMA,
              imports: [FakePrismaModule],
              publisher: new MemoryPublisher(),
              relay: { enabled: false },
              logger: logger() as never,
            })
          : InboxModule.forRoot({ prisma: PRISMA, imports: [FakePrismaModule], logger: logger() as never }),
      ),
    );
    expect(option).toBe('FERRY_CONFIG_INVALID logger');
  });
});

describe('review63: wrongly typed imports / inject', () => {
  // User: `imports: PrismaModule` (the module, not an array of it) or `inject: ConfigService`.
  // Contract (README "forRootAsync placement rules"): the registration options are checked when
  // forRoot / forRootAsync is called and fail "with FerryConfigError showing the value received,
  // as every ferry options object does".
  // Instead: raw TypeErrors from Nest's scanner ("modules.map is not a function", "Cannot read
  // properties of undefined (reading 'length')") naming neither option.
  it('refuses imports that is not an array with FerryConfigError naming imports', async () => {
    const option = await configOptionOf(() =>
      initialized(() =>
        OutboxModule.forRoot({
          prisma: PRISMA,
          imports: FakePrismaModule as never,
          publisher: new MemoryPublisher(),
        }),
      ),
    );
    expect(option).toBe('FERRY_CONFIG_INVALID imports');
  });

  it('refuses inject that is not an array with FerryConfigError naming inject', async () => {
    const option = await configOptionOf(() =>
      initialized(() =>
        InboxModule.forRootAsync({
          prisma: PRISMA,
          imports: [FakePrismaModule],
          inject: PRISMA as never,
          useFactory: () => ({}),
        }),
      ),
    );
    expect(option).toBe('FERRY_CONFIG_INVALID inject');
  });
});

describe('review63: liveness of an application whose inbox worker is disabled by configuration', () => {
  // User: the README's forRootAsync example (`worker: { enabled: config.get('INBOX_WORKER') ===
  // 'on' }`: an API deployment accepts, another one runs the worker) with the README's health
  // example (`FerryHealthIndicator.create({ db, relay: relayService, inbox: inboxService })`)
  // behind the Kubernetes liveness probe.
  // Contract (README): an inbox that is not running "(before init, closing)" is not live; an
  // OutboxRelayService without a relay (no publisher, relay.enabled false) is simply left out.
  // Instead: after app.init() the inbox with its worker off is `down` ("state not started")
  // for ever, so the acceptance-only pod is restarted in a loop, while the relay switched off the
  // same way is omitted and the probe would be up.
  it('is live after init (the disabled worker left out like a disabled relay)', async () => {
    const client = t.newClient();
    const app = await Test.createTestingModule({
      imports: [
        OutboxModule.forRoot({
          prisma: TestPrismaService,
          imports: [prismaModule(client)],
          publisher: new MemoryPublisher(),
          relay: { enabled: false },
        }),
        InboxModule.forRootAsync({
          prisma: TestPrismaService,
          imports: [prismaModule(client)],
          useFactory: () => ({ worker: { enabled: false } }),
        }),
      ],
    }).compile();
    await app.init();
    try {
      const indicator = FerryHealthIndicator.create({
        db: t.db,
        relay: app.get(OutboxRelayService),
        inbox: app.get(InboxService),
      });
      const live = await indicator.isHealthy('ferry', 'liveness');
      expect(live['ferry']?.status).toBe('up');
    } finally {
      await app.close();
    }
  });
});
