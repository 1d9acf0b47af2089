/**
 * Review 66: @ferry/nestjs handler discovery as review 63's fix rewrote it. `@InboxHandler` on a
 * base-class method that the provider's class overrides without repeating the decorator is dropped
 * silently: the application then has no handler at all, so acceptance takes every consumer (an
 * acceptance-only inbox), the receipt is stored, and the override never runs. Neither registered
 * (the override is the method the instance has) nor refused at init.
 */
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { isFerryError } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { InboxHandler, InboxModule, InboxService } from '../src';
import { prismaModule, TestPrismaService } from './fixtures';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

describe('review66: a decorated base method overridden by the provider', () => {
  it('is registered (the override runs) or refused at init, never dropped silently', async () => {
    const ran: string[] = [];
    class ChargeBase {
      @InboxHandler('review66.charge')
      async handle(_payload: unknown): Promise<void> {
        ran.push('base');
      }
    }
    @Injectable()
    class Charge extends ChargeBase {
      override async handle(payload: unknown): Promise<void> {
        ran.push('override');
        await super.handle(payload);
      }
    }
    const app = await Test.createTestingModule({
      imports: [
        InboxModule.forRoot({
          prisma: TestPrismaService,
          imports: [prismaModule(t.newClient())],
          worker: { enabled: false },
        }),
      ],
      providers: [Charge],
    }).compile();
    const refused = await app.init().then(
      () => false,
      (error: unknown) => {
        if (isFerryError(error, 'FERRY_CONFIG_INVALID')) return true;
        throw error;
      },
    );
    try {
      if (!refused) {
        const inbox = app.get(InboxService);
        await inbox.accept({
          consumer: 'review66.charge',
          messageId: 'review66-1',
          tenantId: 'tenant-1',
          payload: { n: 1 },
        });
        await inbox.runOnce();
        // The inbox has no handler for review66.charge: the message was taken and never handled.
        expect(ran).toEqual(['override', 'base']);
      }
    } finally {
      await app.close().catch(() => undefined);
    }
  });
});

describe('review66 class: the method the instance has under a decorated name', () => {
  async function init(provider: new (...args: never[]) => object) {
    const app = await Test.createTestingModule({
      imports: [
        InboxModule.forRoot({
          prisma: TestPrismaService,
          imports: [prismaModule(t.newClient())],
          worker: { enabled: false },
        }),
      ],
      providers: [provider],
    }).compile();
    return app;
  }

  it('a constructor that wraps the decorated method as an own property: the wrapper runs', async () => {
    const ran: string[] = [];
    @Injectable()
    class Traced {
      constructor() {
        const inner = this.handle.bind(this);
        this.handle = async (payload: unknown) => {
          ran.push('trace');
          await inner(payload);
        };
      }
      @InboxHandler('review66.traced')
      async handle(_payload: unknown): Promise<void> {
        ran.push('handle');
      }
    }
    const app = await init(Traced);
    await app.init();
    try {
      const inbox = app.get(InboxService);
      await inbox.accept({
        consumer: 'review66.traced',
        messageId: 'review66-traced-1',
        tenantId: 'tenant-1',
        payload: { n: 1 },
      });
      await inbox.runOnce();
      expect(ran).toEqual(['trace', 'handle']);
    } finally {
      await app.close().catch(() => undefined);
    }
  });

  it('a decorated name the instance holds a non-function under is refused at init, naming Class.method', async () => {
    @Injectable()
    class Broken {
      constructor() {
        (this as unknown as { handle: unknown }).handle = 'not a function';
      }
      @InboxHandler('review66.broken')
      async handle(): Promise<void> {}
    }
    const app = await init(Broken);
    let refused: unknown;
    try {
      await app.init();
    } catch (error) {
      refused = error;
    } finally {
      await app.close().catch(() => undefined);
    }
    expect(isFerryError(refused, 'FERRY_CONFIG_INVALID')).toBe(true);
    expect((refused as Error).message).toContain('Broken.handle');
  });
});
