/**
 * Review 136 (probe): an OutboxModule relay with relay.listenUrl (its LISTEN connection) whose
 * database goes silent (a TCP proxy dropping every byte): OutboxRelayService's close (what
 * app.close() runs) ends within a deadline, and no connection of the relay is left open.
 */
import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import { TcpProxy } from '../../../fault-tests/harness/tcpProxy';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { outcomeWithin } from '../../../test-support/deadlines';
import { OutboxModule, OutboxRelayService } from '../src';
import { Events, MemoryPublisher, prismaModule, TestPrismaService, waitFor } from './fixtures';

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

it('closes the relay and its LISTEN connection within a deadline while the database is silent', async () => {
  const app = await Test.createTestingModule({
    imports: [
      OutboxModule.forRoot({
        prisma: TestPrismaService,
        imports: [prismaModule(t.newClient(), new Events(), true)],
        publisher: new MemoryPublisher(),
        relay: { enabled: true, listenUrl: proxy.urlFor(t.url) },
        pollInterval: 50,
      }),
    ],
  }).compile();
  await app.init();
  await waitFor(() => proxy.openConnections > 0, 'the LISTEN connection open');
  await proxy.setMode('blackhole');
  expect(await outcomeWithin(app.get(OutboxRelayService).onModuleDestroy(), 20_000)).toEqual({
    value: undefined,
  });
  await waitFor(() => proxy.openConnections === 0, 'no relay connection left', 10_000);
  await proxy.setMode('pass');
  expect(await outcomeWithin(app.close(), 15_000)).toEqual({ value: undefined });
}, 60_000);
