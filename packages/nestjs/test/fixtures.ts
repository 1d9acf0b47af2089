import 'reflect-metadata';
import { Module, type DynamicModule, type OnModuleDestroy } from '@nestjs/common';
import type { OutboxMessage, Publisher, PublishOutcome } from '@ferry/core';
import { waitUntil } from '@ferry/testing';

/** Records lifecycle events in order, shared by a test and its providers. */
export class Events {
  readonly log: string[] = [];
}

/** The application's Prisma service as an app would write it: disconnects in onModuleDestroy. */
export class TestPrismaService implements OnModuleDestroy {
  constructor(
    readonly client: {
      $disconnect(): Promise<void>;
    },
    private readonly events: Events,
  ) {
    // Expose the client's methods on the service, as `class PrismaService extends PrismaClient` would.
    return new Proxy(this, {
      get: (target, key, receiver) => {
        if (key in target) return Reflect.get(target, key, receiver);
        const value: unknown = Reflect.get(client, key, client);
        return typeof value === 'function' ? value.bind(client) : value;
      },
    });
  }

  async onModuleDestroy(): Promise<void> {
    this.events.log.push('prisma:disconnect');
    await this.client.$disconnect();
  }
}

/** A PrismaModule exporting TestPrismaService for `client`. */
export function prismaModule(
  client: { $disconnect(): Promise<void> },
  events = new Events(),
  global = false,
): DynamicModule {
  @Module({})
  class PrismaModule {}
  return {
    module: PrismaModule,
    global,
    providers: [
      { provide: Events, useValue: events },
      { provide: TestPrismaService, useFactory: () => new TestPrismaService(client, events) },
    ],
    exports: [TestPrismaService, Events],
  };
}

/** A broker in memory: every message is confirmed. */
export class MemoryPublisher implements Publisher {
  readonly delivered: OutboxMessage[] = [];
  async publish(messages: readonly OutboxMessage[]): Promise<readonly PublishOutcome[]> {
    this.delivered.push(...messages);
    return messages.map((m) => ({ id: m.id, status: 'sent' as const }));
  }
}

/** Waits for `check` to return a truthy value (the one wait-until of @ferry/testing). */
export async function waitFor<T>(
  check: () => Promise<T> | T,
  what: string,
  timeoutMs = 10_000,
): Promise<NonNullable<T>> {
  return (await waitUntil(what, async () => (await check()) || undefined, {
    timeoutMs,
    intervalMs: 20,
  })) as NonNullable<T>;
}

export { gate } from '../../../test-support/holds';

/** The token of UnreachablePrismaModule's client. */
export const UNREACHABLE_PRISMA = 'UNREACHABLE_PRISMA';
const unreachable = async (): Promise<never> => {
  throw new Error('the options should have been refused before any statement');
};
/** A Prisma client provider that must not be reached: options are checked before any statement. */
@Module({
  providers: [
    {
      provide: UNREACHABLE_PRISMA,
      useValue: { $transaction: unreachable, $queryRawUnsafe: unreachable, $executeRawUnsafe: unreachable },
    },
  ],
  exports: [UNREACHABLE_PRISMA],
})
export class UnreachablePrismaModule {}
