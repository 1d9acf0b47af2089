/**
 * Review 103: a ferry module whose services depend on a request-scoped provider.
 *
 * User: provides the application's Prisma client per request (a common multi-tenant pattern:
 * `{ provide: PrismaService, scope: Scope.REQUEST, useFactory: ... }`), or injects a
 * request-scoped provider (a tenant-aware config) into a forRootAsync factory, or gives the
 * outbox the token of a request-scoped publisher provider.
 * Saw: every ferry service then depends on a request-scoped provider, so Nest makes it
 * request-scoped too: it creates none at init and calls none of its lifecycle hooks. app.init()
 * resolved; the relay and the enabled inbox worker never started, with no error, and
 * app.get(InboxService) threw Nest's "marked as a scoped provider".
 * Expected: module init fails with FerryConfigError naming the option (`prisma`, `inject`,
 * `publisher`): the relay and the worker run outside any request, on one singleton client.
 */
import 'reflect-metadata';
import { Injectable, Module, Scope, type DynamicModule } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Publisher } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { InboxHandler, InboxModule, OutboxModule } from '../src';
import { MemoryPublisher } from './fixtures';

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});

afterAll(async () => {
  await t.drop();
});

const PRISMA = 'PRISMA';

/** A module exporting PRISMA (request-scoped when `scope` says so) and a request-scoped config. */
function prismaModule(client: unknown, scope: Scope = Scope.DEFAULT): DynamicModule {
  @Module({})
  class PrismaModule {}
  return {
    module: PrismaModule,
    providers: [{ provide: PRISMA, useFactory: () => client, scope }, TenantConfig, ScopedPublisher],
    exports: [PRISMA, TenantConfig, ScopedPublisher],
  };
}

@Injectable({ scope: Scope.REQUEST })
class TenantConfig {
  readonly pollInterval = 50;
}

@Injectable({ scope: Scope.REQUEST })
class ScopedPublisher extends MemoryPublisher implements Publisher {}

@Injectable()
class Handlers {
  @InboxHandler('review103.scope')
  async handle(): Promise<void> {}
}

/** app.init()'s outcome for the module `build` makes on a fresh client: 'initialized' or the error. */
async function initOutcome(build: (client: unknown) => DynamicModule): Promise<unknown> {
  const client = t.newClient();
  const app = await Test.createTestingModule({ imports: [build(client)], providers: [Handlers] }).compile();
  try {
    return await app.init().then(
      () => 'initialized',
      (error: unknown) => error,
    );
  } finally {
    // A failed init leaves Nest's close() rethrowing: nothing of ferry was started to close.
    await app.close().catch(() => undefined);
    await client.$disconnect();
  }
}

describe('review103: a ferry module depending on a request-scoped provider', () => {
  it('a request-scoped prisma provider fails module init naming prisma (both modules)', async () => {
    for (const build of [
      (client: unknown) =>
        InboxModule.forRoot({
          prisma: PRISMA,
          imports: [prismaModule(client, Scope.REQUEST)],
          worker: { enabled: true },
        }),
      (client: unknown) =>
        OutboxModule.forRoot({
          prisma: PRISMA,
          imports: [prismaModule(client, Scope.REQUEST)],
          publisher: new MemoryPublisher(),
        }),
    ]) {
      const outcome = await initOutcome(build);
      expect(outcome).toMatchObject({ code: 'FERRY_CONFIG_INVALID', option: 'prisma' });
      expect(String((outcome as Error).message)).toMatch(/request-scoped/);
    }
  });

  it('forRootAsync injecting a request-scoped provider fails module init naming inject', async () => {
    for (const build of [
      (client: unknown) =>
        OutboxModule.forRootAsync({
          prisma: PRISMA,
          imports: [prismaModule(client)],
          publisher: new MemoryPublisher(),
          inject: [TenantConfig],
          useFactory: (config: TenantConfig) => ({ pollInterval: config.pollInterval }),
        }),
      (client: unknown) =>
        InboxModule.forRootAsync({
          prisma: PRISMA,
          imports: [prismaModule(client)],
          inject: [TenantConfig],
          useFactory: (config: TenantConfig) => ({
            worker: { enabled: true, pollIntervalMs: config.pollInterval },
          }),
        }),
    ]) {
      expect(await initOutcome(build)).toMatchObject({ code: 'FERRY_CONFIG_INVALID', option: 'inject' });
    }
  });

  it('OutboxModule with the token of a request-scoped publisher fails module init naming publisher', async () => {
    const outcome = await initOutcome((client) =>
      OutboxModule.forRoot({ prisma: PRISMA, imports: [prismaModule(client)], publisher: ScopedPublisher }),
    );
    expect(outcome).toMatchObject({ code: 'FERRY_CONFIG_INVALID', option: 'publisher' });
  });

  it('transient-scoped providers (prisma, injected) still initialize: the services get their own instance', async () => {
    @Injectable({ scope: Scope.TRANSIENT })
    class TransientConfig {
      readonly pollInterval = 50;
    }
    @Module({ providers: [TransientConfig], exports: [TransientConfig] })
    class ConfigModule {}
    const outcome = await initOutcome((client) =>
      OutboxModule.forRootAsync({
        prisma: PRISMA,
        imports: [prismaModule(client, Scope.TRANSIENT), ConfigModule],
        inject: [TransientConfig],
        useFactory: (config: TransientConfig) => ({ pollInterval: config.pollInterval }),
      }),
    );
    expect(outcome).toBe('initialized');
  });
});
