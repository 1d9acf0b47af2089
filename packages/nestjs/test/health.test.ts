import 'reflect-metadata';
import type { LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { createRelay, emit, type Publisher } from '@ferry/core';
import { guardLogger } from '@ferry/core/transport';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { FerryHealthIndicator, fromNestLogger, OutboxModule, OutboxRelayService } from '../src';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';
import { MemoryPublisher, prismaModule, TestPrismaService, waitFor } from './fixtures';

failOnUnhandledRejections();

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** The OutboxModule on this database, its relay polling every 20 ms. */
function outboxApp(
  publisher: Publisher = new MemoryPublisher(),
  circuit?: { openMs: number; maxOpenMs: number },
) {
  return Test.createTestingModule({
    imports: [
      OutboxModule.forRoot({
        prisma: TestPrismaService,
        imports: [prismaModule(t.newClient())],
        publisher,
        pollInterval: 20,
        ...(circuit === undefined ? {} : { circuit }),
      }),
    ],
  }).compile();
}

describe('FerryHealthIndicator', () => {
  it('reports the relay live while the module runs and down once it is closed', async () => {
    const app = await outboxApp();
    await app.init();
    const relay = app.get(OutboxRelayService);
    const indicator = FerryHealthIndicator.create({ db: t.db, relay });
    await waitFor(() => relay.relay?.lastCycleAt, 'a relay cycle');
    expect(await indicator.isHealthy('ferry', 'liveness')).toEqual({
      ferry: { status: 'up', checks: [expect.objectContaining({ name: 'relay', status: 'up' })] },
    });
    expect((await indicator.isHealthy('db'))['db']?.status).toBe('up');
    await app.close();
    expect((await indicator.isHealthy('ferry', 'liveness'))['ferry']?.status).toBe('down');
  });

  it("passes the relay's open circuit through: details' relay circuit check is down with its error", async () => {
    const publisher = new InMemoryPublisher();
    await publisher.close();
    const app = await outboxApp(publisher, { openMs: 60_000, maxOpenMs: 60_000 });
    await emit(t.db, { type: 'nest.health.circuit', payload: {} });
    await app.init();
    try {
      const relay = app.get(OutboxRelayService);
      const indicator = FerryHealthIndicator.create({ db: t.db, relay });
      await waitFor(() => relay.relay?.circuit === 'open', 'an open circuit');
      const details = (await indicator.isHealthy('ferry', 'details'))['ferry'];
      expect(details?.checks.find((check) => check.name === 'relay circuit')).toEqual({
        name: 'relay circuit',
        status: 'down',
        detail: expect.stringMatching(
          /^open since .*: publisher closed: .*publisher is closed; next probe at /,
        ),
      });
      expect((await indicator.isHealthy('ferry', 'liveness'))['ferry']?.status).toBe('up');
    } finally {
      await app.close();
    }
  });

  it("takes core's relays by name beside the module's relay: each its own named check", async () => {
    const app = await outboxApp();
    await app.init();
    const kafka = createRelay({
      db: t.db,
      publisher: new InMemoryPublisher(),
      options: { pollInterval: 20 },
    });
    try {
      const relay = app.get(OutboxRelayService);
      const indicator = FerryHealthIndicator.create({ db: t.db, relay, relays: { kafka } });
      kafka.start();
      await waitFor(() => relay.relay?.lastCycleAt && kafka.lastCycleAt, 'a cycle of both relays');
      await kafka.close();
      expect(await indicator.isHealthy('ferry', 'liveness')).toEqual({
        ferry: {
          status: 'down',
          checks: [
            expect.objectContaining({ name: 'relay', status: 'up' }),
            { name: 'relay "kafka"', status: 'down', detail: 'state closed' },
          ],
        },
      });
    } finally {
      await kafka.close();
      await app.close();
    }
  });
});

describe('fromNestLogger', () => {
  it("passes ferry's log lines to Nest's LoggerService with the fields", () => {
    const calls: Array<[string, unknown[]]> = [];
    const record =
      (method: string) =>
      (...args: unknown[]): void =>
        void calls.push([method, args]);
    const nest: LoggerService = {
      log: record('log'),
      warn: record('warn'),
      error: record('error'),
      debug: record('debug'),
    };
    const logger = fromNestLogger(nest);
    logger.warn({ id: 'e1', err: new Error('boom') }, 'outbox event FAILED');
    logger.info('relay started');
    logger.error({ code: 'X' }, 'failed');
    logger.debug({ n: 1 });
    expect(calls).toEqual([
      ['warn', ['outbox event FAILED {"id":"e1","err":"Error: boom"}', 'ferry']],
      ['log', ['relay started', 'ferry']],
      ['error', ['failed {"code":"X"}', 'ferry']],
      ['debug', ['{"n":1}', 'ferry']],
    ]);
  });

  it('an async LoggerService whose call rejects loses the line, not the process (as ferry guards it)', async () => {
    const gone = async (): Promise<void> => {
      throw new Error('remote sink gone');
    };
    const nest: LoggerService = { log: gone, warn: gone, error: gone };
    const logger = guardLogger(fromNestLogger(nest));
    logger.warn({ id: 'e1' }, 'outbox event FAILED');
    logger.info('relay started');
    // Node reports an unhandled rejection once the microtask queue has drained.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
  });
});
