import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import {
  interactiveTransaction,
  OUTBOX_OPTION_KEYS,
  type Logger,
  type OutboxEvent,
  type PrismaClientLike,
} from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { OutboxEmitter, OutboxModule, OutboxRelayService, type OutboxModuleOptions } from '../src';
import { OUTBOX_SETTINGS_KEYS, type ResolvedOutboxSettings } from '../src/outbox.options';
import { OUTBOX_RESOLVED } from '../src/tokens';
import { MemoryPublisher, prismaModule, TestPrismaService, waitFor } from './fixtures';

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});

afterAll(async () => {
  await t.drop();
});

/** A logger that keeps its warn lines. */
function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  const record = (fields: object | string, message?: string) => {
    warnings.push(typeof fields === 'string' ? fields : (message ?? JSON.stringify(fields)));
  };
  const ignore = () => undefined;
  return { warnings, debug: ignore, info: ignore, warn: record, error: ignore };
}

/** An initialized application with OutboxModule on the test database and an in-memory publisher. */
async function outboxApp(settings: Omit<OutboxModuleOptions, 'prisma' | 'imports' | 'publisher'>) {
  const app = await Test.createTestingModule({
    imports: [
      OutboxModule.forRoot({
        prisma: TestPrismaService,
        imports: [prismaModule(t.newClient())],
        publisher: new MemoryPublisher(),
        ...settings,
      }),
    ],
  }).compile();
  await app.init();
  return app;
}

describe('OutboxModule options are resolved once, by core', () => {
  it('runs the relay on the options the module resolved, and logs a deprecation once', async () => {
    const logger = recordingLogger();
    const app = await outboxApp({
      relay: { enabled: true },
      stuckThreshold: 2_000,
      lease: { heartbeatInterval: 500 },
      pollInterval: 50,
      logger,
    });
    try {
      const resolved = app.get<ResolvedOutboxSettings>(OUTBOX_RESOLVED);
      const relay = app.get(OutboxRelayService).relay;
      expect(relay?.options).toBe(resolved.options);
      expect(relay?.options.lease.duration).toBe(2_000);
      expect(logger.warnings.filter((line) => line.includes('stuckThreshold'))).toHaveLength(1);
    } finally {
      await app.close();
    }
  });

  it('passes every core option through without a NestJS edit (circuit, added to core later)', async () => {
    const app = await outboxApp({ circuit: { failureThreshold: 7 } });
    try {
      expect(app.get(OutboxRelayService).relay?.options.circuit.failureThreshold).toBe(7);
    } finally {
      await app.close();
    }
  });

  it("gives its one observer function the emitter's and the relay's events", async () => {
    const events: OutboxEvent[] = [];
    const app = await outboxApp({ pollInterval: 20, observer: (event) => void events.push(event) });
    try {
      const prisma = app.get(TestPrismaService) as unknown as PrismaClientLike;
      const { id } = await interactiveTransaction(prisma, (tx) =>
        app.get(OutboxEmitter).emit(tx, { type: 'order.created', payload: {} }),
      );
      await waitFor(() => events.some((e) => e.type === 'sent' && e.id === id), 'the sent event');
      expect(events.filter((e) => e.type !== 'cycle')).toEqual([
        { type: 'inserted', ids: [id], types: ['order.created'], committed: false },
        { type: 'claimed', claimToken: expect.any(String), ids: [id], types: ['order.created'] },
        { type: 'sent', id, eventType: 'order.created', attempt: 1, ageMs: expect.any(Number) },
      ]);
    } finally {
      await app.close();
    }
  });

  it("refuses the old object of observer hooks at module init (core's check), naming the option", async () => {
    await expect(outboxApp({ observer: { sent: () => undefined } as never })).rejects.toMatchObject({
      code: 'FERRY_CONFIG_INVALID',
      option: 'observer',
      message: expect.stringContaining('observer is now a function of { type } events, see CHANGELOG'),
    });
  });

  it("knows exactly core's option keys plus its own module settings", () => {
    expect([...OUTBOX_SETTINGS_KEYS].sort()).toEqual(
      [...OUTBOX_OPTION_KEYS, 'limits', 'logger', 'observer', 'relay'].sort(),
    );
  });
});
