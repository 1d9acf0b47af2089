/**
 * Review 136 (probe): the application's database blackholed under a running Nest inbox (a TCP
 * proxy that drops every byte). The health indicator answers within its checkTimeoutMs (down),
 * and app.close() ends within a deadline: the worker's statements in flight have their deadline.
 */
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { fromPrisma } from '@ferry/core';
import { TcpProxy } from '../../../fault-tests/harness/tcpProxy';
import { createTestDatabase, prismaFor, type TestDatabase } from '../../../test-support/database';
import { outcomeWithin } from '../../../test-support/deadlines';
import { FerryHealthIndicator, InboxHandler, InboxModule, InboxService } from '../src';
import { Events, prismaModule, TestPrismaService, waitFor } from './fixtures';

let t: TestDatabase;
let proxy: TcpProxy;
beforeAll(async () => {
  t = await createTestDatabase();
  const url = new URL(t.url);
  proxy = await TcpProxy.start({ host: url.hostname, port: Number(url.port || 5432) });
});
afterAll(async () => {
  await proxy.close();
  await t.drop();
});

@Injectable()
class Handlers {
  @InboxHandler('review136.outage')
  async handle(): Promise<void> {}
}

it('answers health (down) within its deadline and closes within one while the database is blackholed', async () => {
  const client = prismaFor(proxy.urlFor(t.url), { connectionTimeoutMillis: 1_000 });
  const app = await Test.createTestingModule({
    imports: [
      InboxModule.forRoot({
        prisma: TestPrismaService,
        imports: [prismaModule(client, new Events(), true)],
        worker: { enabled: true, pollIntervalMs: 20, shutdownTimeoutMs: 1_000 },
        statementTimeoutMs: 1_000,
      }),
    ],
    providers: [Handlers],
  }).compile();
  await app.init();
  const inbox = app.get(InboxService);
  const health = FerryHealthIndicator.create({ db: fromPrisma(client as never), inbox, checkTimeoutMs: 500 });
  await waitFor(async () => (await health.isHealthy()).ferry!.status === 'up', 'ready before the outage');
  await proxy.setMode('blackhole');
  const ready = await outcomeWithin(health.isHealthy(), 10_000);
  expect(ready).toEqual({ value: { ferry: expect.objectContaining({ status: 'down' }) } });
  expect(await outcomeWithin(inbox.close(), 15_000)).toEqual({ value: undefined });
  await proxy.setMode('pass');
  expect(await outcomeWithin(app.close(), 15_000)).toEqual({ value: undefined });
}, 60_000);
