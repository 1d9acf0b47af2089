import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import { isFerryError, type PrismaClientLike } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import {
  InboxAdminService,
  InboxModule,
  InboxPrivilegedAdminService,
  OutboxEmitter,
  OutboxModule,
  OutboxOperatorService,
  OutboxTenantAdminService,
} from '../src';
import { holdConnection } from '../../../test-support/holds';
import { prismaModule, TestPrismaService } from './fixtures';

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});

afterAll(async () => {
  await t.drop();
});

/** The holder gives the pool's one connection back at the latest after this: the calls then succeed. */
const HOLD_DEADLINE_MS = 20_000;

/**
 * The module deadline under test: far below the hold, and far above what app.init()'s own
 * statements (the schema check on a fresh connection) take on a loaded machine. At 200 ms,
 * init itself failed once in a full CI run ("no answer from the database within 200 ms").
 */
const MODULE_DEADLINE_MS = 2_000;

/**
 * The module's statement deadline (the outbox's `statementTimeout`, the inbox's
 * `statementTimeoutMs`) is every service's, not only the relay's and the worker's: with the
 * pool's only connection held, each call fails with a retriable FerryError at that deadline
 * instead of waiting for core's 30 s default (by when the holder has let go and it succeeds).
 */
describe("the module's statement deadline reaches the emitter and the admin services", () => {
  it('fails each call with the pool held, after the module deadline', async () => {
    const client = t.newClient({ max: 1 });
    const prisma = prismaModule(client, undefined, true);
    const app = await Test.createTestingModule({
      imports: [
        prisma,
        OutboxModule.forRoot({ prisma: TestPrismaService, statementTimeout: MODULE_DEADLINE_MS }),
        InboxModule.forRoot({
          prisma: TestPrismaService,
          statementTimeoutMs: MODULE_DEADLINE_MS,
          privilegedAdmin: true,
        }),
      ],
    }).compile();
    await app.init();
    const held = await holdConnection(client, HOLD_DEADLINE_MS);
    try {
      const root = app.get(TestPrismaService) as unknown as PrismaClientLike;
      const calls: Record<string, () => Promise<unknown>> = {
        'OutboxEmitter.emit (own transaction)': () =>
          app.get(OutboxEmitter).emit(root, { type: 'held', payload: {}, tenantId: 'tenant-a' }),
        'OutboxOperatorService.stats': () => app.get(OutboxOperatorService).stats(),
        'OutboxTenantAdminService.get': () =>
          app.get(OutboxTenantAdminService).forTenant('tenant-a').get('00000000-0000-0000-0000-000000000000'),
        'InboxAdminService.list': () => app.get(InboxAdminService).forTenant('tenant-a').list(),
        'InboxPrivilegedAdminService.stats': () => app.get(InboxPrivilegedAdminService).stats(),
      };
      const outcomes = await Promise.all(
        Object.entries(calls).map(async ([name, call]) => {
          const error = await call().then(
            () => 'succeeded',
            (e: unknown) => e,
          );
          const retriable = isFerryError(error) && error.retriable;
          return [name, retriable ? 'retriable FerryError' : error] as const;
        }),
      );
      expect(Object.fromEntries(outcomes)).toEqual(
        Object.fromEntries(Object.keys(calls).map((name) => [name, 'retriable FerryError'])),
      );
    } finally {
      await held.release();
      await app.close();
    }
  });
});
