import 'reflect-metadata';
import { InboxModule, OutboxModule } from '../src';
import { UNREACHABLE_PRISMA as PRISMA, UnreachablePrismaModule as FakePrismaModule } from './fixtures';
import { describeHostileShapes, type EntryPoint } from '../../../test-support/hostileOptions';

/**
 * Review 142: the registration options of forRoot / forRootAsync reshaped as an application could
 * hand them over (test-support/hostileOptions.ts): a throwing getter or trap, a revoked Proxy is
 * FerryConfigError naming the option; a null prototype, inherited, frozen or sealed options work;
 * each option is read once (the module is built from the values checked).
 */
const publisher = { publish: async () => [] };
const factory = () => ({});

const ENTRY_POINTS: readonly EntryPoint[] = [
  {
    name: 'OutboxModule.forRoot',
    call: (options) => OutboxModule.forRoot(options as never),
    base: () => ({ prisma: PRISMA, imports: [FakePrismaModule], publisher, isGlobal: false }),
    key: 'isGlobal',
    bad: 'yes',
  },
  {
    name: 'OutboxModule.forRootAsync',
    call: (options) => OutboxModule.forRootAsync(options as never),
    base: () => ({ prisma: PRISMA, imports: [FakePrismaModule], useFactory: factory, isGlobal: true }),
    key: 'useFactory',
    bad: 'factory',
  },
  {
    name: 'InboxModule.forRoot',
    call: (options) => InboxModule.forRoot(options as never),
    base: () => ({ prisma: PRISMA, imports: [FakePrismaModule], isGlobal: false }),
    key: 'isGlobal',
    bad: 1,
  },
  {
    name: 'InboxModule.forRootAsync',
    call: (options) => InboxModule.forRootAsync(options as never),
    base: () => ({ prisma: PRISMA, imports: [FakePrismaModule], useFactory: factory, inject: [] }),
    key: 'inject',
    bad: 'PRISMA',
  },
];

describeHostileShapes(ENTRY_POINTS);
