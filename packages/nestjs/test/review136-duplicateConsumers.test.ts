/**
 * Review 136 (probe): one consumer name taken by two handlers, across providers or by a
 * decorator and a `handlers` token. Module init fails with FerryConfigError naming
 * `handlers.<consumer>` and both origins' second, before any statement; neither handler is
 * silently dropped.
 */
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { FerryConfigError } from '@ferry/core';
import { InboxHandler, InboxModule } from '../src';
import { UNREACHABLE_PRISMA, UnreachablePrismaModule } from './fixtures';

@Injectable()
class Orders {
  @InboxHandler('review136.dup')
  async handle(): Promise<void> {}
}

@Injectable()
class Billing {
  @InboxHandler('review136.dup')
  async charge(): Promise<void> {}
}

@Injectable()
class TokenHandler {
  async handle(): Promise<void> {}
}

async function initError(handlers: Record<string, unknown>, providers: unknown[]): Promise<unknown> {
  const app = await Test.createTestingModule({
    imports: [
      InboxModule.forRoot({
        prisma: UNREACHABLE_PRISMA,
        imports: [UnreachablePrismaModule],
        handlers,
      } as never),
    ],
    providers: providers as never[],
  }).compile();
  try {
    await app.init();
    return 'initialized';
  } catch (error) {
    return error;
  } finally {
    await app.close().catch(() => undefined);
  }
}

it.each([
  ['two providers decorate one consumer', {}, [Orders, Billing], /again by (Orders\.handle|Billing\.charge)/],
  [
    'a decorator and a handlers token',
    { 'review136.dup': TokenHandler },
    [Orders, TokenHandler],
    /again by Orders\.handle/,
  ],
  [
    'one class provided under two tokens (two instances)',
    {},
    [Orders, { provide: 'ORDERS_AGAIN', useClass: Orders }],
    /again by Orders\.handle/,
  ],
])('%s: module init refuses it naming the consumer', async (_name, handlers, providers, origin) => {
  const error = await initError(handlers, providers);
  expect(error).toBeInstanceOf(FerryConfigError);
  expect((error as Error).message).toContain('handlers.review136.dup');
  expect((error as Error).message).toMatch(origin);
});

it('one instance provided under an alias (useExisting) is registered once', async () => {
  const error = await initError({}, [Orders, { provide: 'ORDERS_ALIAS', useExisting: Orders }]);
  // Past the handlers: it fails only at the schema check, on the unreachable client.
  expect(error).toMatchObject({
    code: 'FERRY_DATABASE_ERROR',
    message: expect.stringContaining('refused before any statement'),
  });
});
