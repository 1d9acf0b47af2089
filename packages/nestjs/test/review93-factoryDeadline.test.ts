/**
 * Review 93 (failed first): a forRootAsync factory that never resolves (a configuration service
 * waiting on a secret store that does not answer).
 *
 * What I did: compiled a Nest application with InboxModule.forRootAsync / OutboxModule.forRootAsync
 * whose useFactory returned a promise that never settles, and waited generously for compile().
 * What happened: compile() never settled and nothing named ferry: the application's bootstrap
 * hung for ever.
 * What should happen: every wait has a deadline: the factory is given `factoryTimeoutMs` (a
 * top-level forRootAsync option, default 30 s), then compile() rejects with FERRY_CONFIG_INVALID
 * naming the module's factory.
 */
import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import { FerryConfigError } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { outcomeWithin } from '../../../test-support/deadlines';
import { InboxModule, OutboxModule } from '../src';
import { prismaModule, TestPrismaService } from './fixtures';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const never = () => new Promise<never>(() => undefined);

describe('a forRootAsync factory that never resolves', () => {
  it.each([
    [
      'InboxModule',
      () => InboxModule.forRootAsync({ prisma: TestPrismaService, factoryTimeoutMs: 200, useFactory: never }),
    ],
    [
      'OutboxModule',
      () =>
        OutboxModule.forRootAsync({ prisma: TestPrismaService, factoryTimeoutMs: 200, useFactory: never }),
    ],
  ])('%s: compile() fails naming the factory and its deadline', async (name, module) => {
    const compiled = Test.createTestingModule({
      imports: [prismaModule(t.prisma, undefined, true), module()],
    }).compile();
    const outcome = await outcomeWithin(compiled, 20_000);
    expect(outcome).toEqual({ error: expect.any(FerryConfigError) });
    const error = (outcome as { error: FerryConfigError }).error;
    expect(error.message).toContain(`${name}.forRootAsync factory`);
    expect(error.message).toContain('200 ms');
  });

  it('with no factoryTimeoutMs, the default deadline (30 s) ends the wait', async () => {
    const module = InboxModule.forRootAsync({ prisma: TestPrismaService, useFactory: never });
    const compiled = Test.createTestingModule({
      imports: [prismaModule(t.prisma, undefined, true), module],
    }).compile();
    expect(await outcomeWithin(compiled, 50_000)).toEqual({ error: expect.any(FerryConfigError) });
  }, 60_000);

  it('factoryTimeoutMs is checked when forRootAsync is called', () => {
    expect(() =>
      InboxModule.forRootAsync({ prisma: TestPrismaService, factoryTimeoutMs: -1, useFactory: () => ({}) }),
    ).toThrow(expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option: 'factoryTimeoutMs' }));
  });
});
