/**
 * Review finding (failed first), review 23 of 7491110: the NestJS integration's lifecycle edges:
 * health before app.init(), a `publisher` that is neither a Publisher nor an injection token, and
 * a relay left running by a bootstrap that failed after it started (NestJS's close() rethrows
 * before any destroy hook: documented, with the way out tested).
 */
import 'reflect-metadata';
import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { isFerryError } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import {
  FerryHealthIndicator,
  InboxHandler,
  InboxModule,
  InboxService,
  OutboxModule,
  OutboxRelayService,
} from '../src';
import { MemoryPublisher, prismaModule, TestPrismaService } from './fixtures';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

@Injectable()
class Projection {
  @InboxHandler('review23.projection')
  async project(): Promise<void> {}
}

describe('review23: FerryHealthIndicator over an InboxService before app.init()', () => {
  // User: builds the health indicator from the module services (as the README shows) and a
  // liveness probe hits it before the Nest application finished init (e.g. the HTTP server is up
  // while bootstrap is still running, or the indicator is built in a provider's constructor).
  // Contract (README "Health and logging"): "An inbox that is not running (before init, closing)
  // is not live": isHealthy resolves to the terminus shape with status 'down'.
  // Instead: isHealthy rejects with FerryError FERRY_CLOSED ("the inbox is not initialized
  // yet"), because inboxSource reads service.inbox.pollIntervalMs, which throws before init.
  it('reports the inbox worker down (not a thrown FERRY_CLOSED) before module init', async () => {
    const app = await Test.createTestingModule({
      imports: [
        InboxModule.forRoot({
          prisma: TestPrismaService,
          imports: [prismaModule(t.newClient())],
          worker: { enabled: true, pollIntervalMs: 20 },
        }),
      ],
      providers: [Projection],
    }).compile();
    const indicator = FerryHealthIndicator.create({ db: t.db, inbox: app.get(InboxService) });
    const result = await indicator.isHealthy('ferry', 'liveness').then(
      (value) => value,
      (error: unknown) => error,
    );
    expect(isFerryError(result, 'FERRY_CLOSED')).toBe(false);
    expect(result).toEqual({
      ferry: {
        status: 'down',
        checks: [expect.objectContaining({ name: 'inbox worker', status: 'down' })],
      },
    });
  });
});

describe('review23: OutboxModule publisher that is neither a Publisher nor an injection token', () => {
  // User: passes the transport's connection (or a config object) instead of its Publisher, i.e.
  // an object without publish(): `OutboxModule.forRoot({ ..., publisher: connection })`.
  // Contract (README OutboxModule): `publisher` is "a Publisher instance or the injection token of
  // one"; "An invalid or unknown option fails module initialization with FerryConfigError
  // (code FERRY_CONFIG_INVALID, option naming it)". An object is not an injection token.
  // Instead: the object is used as a useExisting token and Nest fails with
  // UnknownDependenciesException "Please make sure that the argument "[object Object]" at index
  // [0] is available in the OutboxModule module", which names neither `publisher` nor the cause.
  it('refuses an object without publish() with FerryConfigError naming publisher', async () => {
    const notAPublisher = { brokers: ['127.0.0.1:9092'] };
    const error: unknown = await (async () => {
      const app = await Test.createTestingModule({
        imports: [
          OutboxModule.forRoot({
            prisma: TestPrismaService,
            imports: [prismaModule(t.newClient())],
            publisher: notAPublisher as never,
          }),
        ],
      }).compile();
      await app.init();
      await app.close();
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'FERRY_CONFIG_INVALID', option: 'publisher' });
  });
});

describe('review23: a bootstrap that fails after the relay started', () => {
  // User: an application whose own onApplicationBootstrap fails (a config check, a warm-up call)
  // after ferry's OutboxRelayService started the relay in its onApplicationBootstrap. app.init()
  // rejects; NestJS 11's app.close() then rethrows that failure before any destroy hook runs, so
  // no module's onModuleDestroy runs (Nest's behaviour, not ferry's: the review found the relay
  // still running). The README tells the user to end the process or close ferry's services
  // themselves; this is that path: the services' onModuleDestroy stops the relay and drains.
  it('stops a relay left running by a failed app.init() when the service is closed directly', async () => {
    @Injectable()
    class FailingWarmup implements OnApplicationBootstrap {
      onApplicationBootstrap(): void {
        throw new Error('warm-up failed');
      }
    }
    const publisher = new MemoryPublisher();
    const app = await Test.createTestingModule({
      imports: [
        OutboxModule.forRoot({
          prisma: TestPrismaService,
          imports: [prismaModule(t.newClient())],
          publisher,
          pollInterval: 20,
        }),
      ],
      providers: [FailingWarmup],
    }).compile();
    const relayService = app.get(OutboxRelayService);
    try {
      await expect(app.init()).rejects.toThrow('warm-up failed');
      await expect(app.close()).rejects.toThrow('warm-up failed');
      expect(relayService.relay?.state).toBe('running');
      await relayService.onModuleDestroy();
      expect(relayService.relay?.state).toBe('closed');
    } finally {
      await relayService.relay?.close();
    }
  });
});

describe('review23: acceptance through InboxService after app.close()', () => {
  // User: a transport consumer attached to InboxService in a module Nest destroys after the
  // inbox module (or never closed) goes on offering deliveries after app.close(). Noticed by the
  // review: the acceptance was written through the Prisma client the application had just
  // disconnected (Prisma reconnects on the next query), so a shut-down app kept writing and its
  // pool open. Contract: after shutdown, acceptance refuses with FERRY_CLOSED (batch-wide: a
  // transport holds the deliveries for the broker to redeliver) and writes nothing.
  it('refuses acceptance with FERRY_CLOSED once the inbox module is destroyed, writing nothing', async () => {
    const app = await Test.createTestingModule({
      imports: [
        InboxModule.forRoot({
          prisma: TestPrismaService,
          imports: [prismaModule(t.newClient())],
          worker: { enabled: false },
        }),
      ],
      providers: [Projection],
    }).compile();
    await app.init();
    const inbox = app.get(InboxService);
    await app.close();
    const input = {
      consumer: 'review23.projection',
      messageId: 'after-close-1',
      tenantId: null,
      payload: { n: 1 },
    };
    const refused = await inbox.acceptMany([input]).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isFerryError(refused, 'FERRY_CLOSED')).toBe(true);
    const rows = await t.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM ferry_inbox_receipts WHERE message_id = 'after-close-1'",
    );
    expect(rows[0]!.n).toBe(0);
  });
});

describe('review23: relay.enabled true without a publisher', () => {
  // User: asks for a relay (`relay: { enabled: true }`) but forgets `publisher` (noticed by the
  // review): the module started without a relay, silently, and emitted events stayed PENDING.
  // Contract: a contradictory option fails module initialization with FerryConfigError naming it.
  it('fails module initialization with FerryConfigError naming relay.enabled', async () => {
    const error: unknown = await (async () => {
      const app = await Test.createTestingModule({
        imports: [
          OutboxModule.forRoot({
            prisma: TestPrismaService,
            imports: [prismaModule(t.newClient())],
            relay: { enabled: true },
          }),
        ],
      }).compile();
      await app.close();
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'FERRY_CONFIG_INVALID', option: 'relay.enabled' });
  });
});
