/**
 * Fix of review 63: the other members of each class the review found. A handler provider Nest
 * cannot hand over as one constructed singleton, or a token no provider answers, whichever way it
 * is registered; registration values a circular import leaves undefined; decorations the
 * discovery would skip; a disabled worker's liveness once it is started by hand.
 */
import 'reflect-metadata';
import { Injectable, Scope, type DynamicModule, type InjectionToken } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { isFerryError } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { FerryHealthIndicator, InboxHandler, InboxModule, InboxService } from '../src';
import {
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

async function initialized(module: () => DynamicModule, providers: InjectionToken[] = []): Promise<void> {
  const app = await Test.createTestingModule({
    imports: [module()],
    providers: providers as never[],
  }).compile();
  try {
    await app.init();
  } finally {
    await app.close();
  }
}

describe('fix63: handlers: { consumer: token } Nest cannot hand over as one constructed singleton', () => {
  @Injectable({ scope: Scope.TRANSIENT })
  class TransientBilling {
    async handle(): Promise<void> {}
  }
  @Injectable({ scope: Scope.REQUEST })
  class RequestBilling {
    async handle(): Promise<void> {}
  }
  @Injectable()
  class NotProvided {
    async handle(): Promise<void> {}
  }

  it.each([
    ['a transient provider', TransientBilling, [TransientBilling]],
    ['a request-scoped provider', RequestBilling, [RequestBilling]],
    ['a token no module provides', NotProvided, []],
  ])('refuses %s with FerryConfigError naming handlers.billing.charge', async (_what, token, providers) => {
    const option = await configOptionOf(() =>
      initialized(
        () =>
          InboxModule.forRoot({
            prisma: PRISMA,
            imports: [FakePrismaModule],
            handlers: { 'billing.charge': token },
          }),
        providers,
      ),
    );
    expect(option).toBe('FERRY_CONFIG_INVALID handlers.billing.charge');
  });
});

describe('fix63: registration values a circular import leaves undefined', () => {
  it('refuses an undefined handlers token when forRoot is called, with the cause', () => {
    const register = () =>
      InboxModule.forRoot({ prisma: PRISMA, handlers: { 'billing.charge': undefined as never } });
    expect(register).toThrow(
      expect.objectContaining({
        code: 'FERRY_CONFIG_INVALID',
        option: 'handlers.billing.charge',
        message: expect.stringContaining('imported in a cycle') as unknown,
      }),
    );
  });

  it('refuses an undefined entry of imports, naming imports', async () => {
    const option = await configOptionOf(() =>
      initialized(() =>
        InboxModule.forRoot({ prisma: PRISMA, imports: [FakePrismaModule, undefined as never] }),
      ),
    );
    expect(option).toBe('FERRY_CONFIG_INVALID imports');
  });

  it('refuses an undefined entry of inject, naming inject', async () => {
    const option = await configOptionOf(() =>
      initialized(() =>
        InboxModule.forRootAsync({
          prisma: PRISMA,
          imports: [FakePrismaModule],
          inject: [undefined as never],
          useFactory: () => ({}),
        }),
      ),
    );
    expect(option).toBe('FERRY_CONFIG_INVALID inject');
  });
});

describe('fix63: @InboxHandler decorations the discovery must not skip', () => {
  it('registers a decorated method with a symbol name', async () => {
    const project = Symbol('project');
    @Injectable()
    class SymbolNamed {
      @InboxHandler('fix63.symbol')
      async [project](): Promise<void> {}
    }
    const app = await Test.createTestingModule({
      imports: [InboxModule.forRoot({ prisma: TestPrismaService, imports: [prismaModule(t.newClient())] })],
      providers: [SymbolNamed],
    }).compile();
    await app.init();
    try {
      expect(Object.keys(app.get(InboxService).inbox.options.handlers)).toEqual(['fix63.symbol']);
    } finally {
      await app.close();
    }
  });

  it('refuses a consumer name with a NUL (acceptance refuses it) at module init', async () => {
    @Injectable()
    class NulName {
      @InboxHandler('fix63.\u0000nul')
      async project(): Promise<void> {}
    }
    const app = await Test.createTestingModule({
      imports: [InboxModule.forRoot({ prisma: TestPrismaService, imports: [prismaModule(t.newClient())] })],
      providers: [NulName],
    }).compile();
    // close() inside: Nest 11's close() rethrows a failed init.
    const option = await configOptionOf(async () => {
      try {
        await app.init();
      } finally {
        await app.close();
      }
    });
    expect(option).toBe('FERRY_CONFIG_INVALID handlers.fix63.\u0000nul');
  });
});

describe('fix63: liveness of a disabled inbox worker started by hand', () => {
  it('is in liveness once InboxService.start() runs it', async () => {
    @Injectable()
    class Projection {
      @InboxHandler('fix63.started')
      async project(): Promise<void> {}
    }
    const app = await Test.createTestingModule({
      imports: [
        InboxModule.forRoot({
          prisma: TestPrismaService,
          imports: [prismaModule(t.newClient())],
          worker: { enabled: false, pollIntervalMs: 20 },
        }),
      ],
      providers: [Projection],
    }).compile();
    await app.init();
    try {
      const inbox = app.get(InboxService);
      const indicator = FerryHealthIndicator.create({ db: t.db, inbox });
      expect(await indicator.isHealthy('ferry', 'liveness')).toEqual({ ferry: { status: 'up', checks: [] } });
      inbox.start();
      await waitFor(() => inbox.inbox.lastCycleAt, 'a worker cycle');
      expect(await indicator.isHealthy('ferry', 'liveness')).toEqual({
        ferry: { status: 'up', checks: [expect.objectContaining({ name: 'inbox worker', status: 'up' })] },
      });
      await inbox.close();
      expect((await indicator.isHealthy('ferry', 'liveness'))['ferry']?.status).toBe('down');
    } finally {
      await app.close();
    }
  });
});
