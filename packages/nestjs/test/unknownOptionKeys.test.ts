import 'reflect-metadata';
import { type DynamicModule } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { InboxModule, OutboxModule } from '../src';
import { UNREACHABLE_PRISMA as PRISMA, UnreachablePrismaModule as FakePrismaModule } from './fixtures';
import { describeOptionTable, misspelt, wrongType } from '../../../test-support/optionTables';

/**
 * Every public entry point of @ferry/nestjs that takes an options object, with a misspelt key and
 * a wrongly typed value: each is refused with FERRY_CONFIG_INVALID naming the option's path.
 * Registration options when forRoot / forRootAsync is called; the settings (core's options and
 * the module's own) at module init, before any statement: the Prisma client here answers nothing.
 */

const publisher = { publish: async () => [] };
/** Module init, where the settings are checked; a module that starts is closed again. */
async function init(module: DynamicModule) {
  const app = await Test.createTestingModule({ imports: [module] }).compile();
  return app.init();
}
const outbox = (settings: Record<string, unknown>) =>
  init(OutboxModule.forRoot({ prisma: PRISMA, imports: [FakePrismaModule], publisher, ...settings }));
const inbox = (settings: Record<string, unknown>) =>
  init(InboxModule.forRoot({ prisma: PRISMA, imports: [FakePrismaModule], ...settings }));
const outboxAsync = (extra: Record<string, unknown>, settings: Record<string, unknown> = {}) =>
  init(
    OutboxModule.forRootAsync({
      prisma: PRISMA,
      imports: [FakePrismaModule],
      useFactory: () => settings,
      ...extra,
    }),
  );
const inboxAsync = (extra: Record<string, unknown>, settings: Record<string, unknown> = {}) =>
  init(
    InboxModule.forRootAsync({
      prisma: PRISMA,
      imports: [FakePrismaModule],
      useFactory: () => settings,
      ...extra,
    }),
  );

describe('a misspelt option key is refused, naming its path', () => {
  describeOptionTable([
    misspelt('OutboxModule.forRoot', 'pollIntervall', () => outbox({ pollIntervall: 5 })),
    misspelt('OutboxModule.forRoot retry', 'retry.maxRetry', () => outbox({ retry: { maxRetry: 3 } })),
    misspelt('OutboxModule.forRoot relay', 'relay.enable', () => outbox({ relay: { enable: false } })),
    misspelt('OutboxModule.forRootAsync', 'injects', () => outboxAsync({ injects: [] })),
    misspelt('OutboxModule.forRootAsync factory', 'pollIntervall', () =>
      outboxAsync({}, { pollIntervall: 5 }),
    ),
    misspelt('InboxModule.forRoot', 'statementTimeout', () => inbox({ statementTimeout: 5 })),
    misspelt('InboxModule.forRoot worker', 'worker.pollInterval', () =>
      inbox({ worker: { pollInterval: 5 } }),
    ),
    misspelt('InboxModule.forRootAsync', 'privilegedAdmn', () => inboxAsync({ privilegedAdmn: true })),
    misspelt('InboxModule.forRootAsync factory', 'statementTimeout', () =>
      inboxAsync({}, { statementTimeout: 5 }),
    ),
  ]);
});

describe('a wrongly typed option value is refused, naming its path and showing the value', () => {
  describeOptionTable([
    wrongType('OutboxModule.forRoot', 'pollInterval', '"50" (string)', () => outbox({ pollInterval: '50' })),
    wrongType('OutboxModule.forRoot relay', 'relay.enabled', '"no" (string)', () =>
      outbox({ relay: { enabled: 'no' } }),
    ),
    wrongType('OutboxModule.forRoot', 'observer', '"log" (string)', () => outbox({ observer: 'log' })),
    wrongType('OutboxModule.forRoot', 'isGlobal', '"yes" (string)', () => outbox({ isGlobal: 'yes' })),
    wrongType('OutboxModule.forRootAsync', 'useFactory', '{} (object)', () =>
      outboxAsync({ useFactory: {} }),
    ),
    wrongType('InboxModule.forRoot', 'maxPayloadBytes', '"50" (string)', () =>
      inbox({ maxPayloadBytes: '50' }),
    ),
    wrongType('InboxModule.forRoot', 'privilegedAdmin', '"true" (string)', () =>
      inbox({ privilegedAdmin: 'true' }),
    ),
    wrongType('InboxModule.forRoot', 'global', '"all" (string)', () => inbox({ global: 'all' })),
    wrongType('InboxModule.forRootAsync', 'isGlobal', '1 (number)', () => inboxAsync({ isGlobal: 1 })),
    wrongType('InboxModule.forRootAsync factory', 'worker.concurrency', '-1 (number)', () =>
      inboxAsync({}, { worker: { concurrency: -1 } }),
    ),
  ]);
});
