/**
 * Scenario: TCP blackhole on the outbox relay's LISTEN connection.
 *
 * Breaks: the relay's dedicated LISTEN connection goes through a TCP proxy that turns into a
 * blackhole (no bytes, no FIN, no RST). Events are emitted during the blackhole; their NOTIFY
 * is lost. The relay's poll interval is ten minutes, so only LISTEN wakes it.
 *
 * Invariant: the relay notices the dead LISTEN connection while the blackhole lasts (its
 * keepalive query misses listen.keepaliveTimeout), reconnects once traffic passes again, runs
 * a cycle for what it may have missed, and is woken by NOTIFY on the new connection.
 * Ledger: every emitted event SENT exactly once; lost = 0, appliedTwice = 0, stuck = 0.
 */
import { createEmitter, createRelay, type OutboxMessage } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../test-support/database';
import { assertLedger, emptyLedger, reconcile } from '../harness/ledger';
import { TcpProxy } from '../harness/tcpProxy';
import { quietLogger, waitFor } from './support';

describe('operations: LISTEN keepalive through a TCP blackhole', () => {
  let t: TestDatabase;
  let proxy: TcpProxy;
  beforeAll(async () => {
    t = await createTestDatabase();
    const server = new URL(t.url);
    proxy = await TcpProxy.start({ host: server.hostname, port: Number(server.port || 5432) });
  });
  afterAll(async () => {
    await proxy?.close();
    await t?.drop();
  });

  it('notices a silently dead LISTEN connection, reconnects and is woken by NOTIFY again', async () => {
    const delivered: string[] = [];
    const relay = createRelay({
      db: t.db,
      listenUrl: proxy.urlFor(t.url),
      publisher: {
        publish: async (messages: readonly OutboxMessage[]) =>
          messages.map((m) => {
            delivered.push(m.id);
            return { id: m.id, status: 'sent' as const };
          }),
      },
      options: {
        pollInterval: 600_000,
        listen: {
          keepaliveInterval: 200,
          keepaliveTimeout: 1_000,
          reconnectInitialDelay: 50,
          reconnectMaxDelay: 500,
        },
      },
      logger: quietLogger,
    });
    const listener = relay.listener!;
    const emitter = createEmitter();
    const offered: string[] = [];
    const emitOne = async (): Promise<string> => {
      const [id] = (await emitter.emitMany(t.db, [{ type: 'listen.keepalive', payload: {} }])).ids;
      offered.push(id!);
      return id!;
    };
    try {
      relay.start();
      await waitFor('LISTEN connected', () => listener.connected && relay.idle);
      const first = await emitOne();
      await waitFor('the first event woken by NOTIFY', () => delivered.includes(first));

      await proxy.setMode('blackhole');
      await emitOne();
      await waitFor(
        'the dead LISTEN connection noticed during the blackhole',
        () => !listener.connected,
        15_000,
      );
      expect(proxy.mode).toBe('blackhole');

      await proxy.setMode('pass');
      await waitFor('LISTEN reconnected', () => listener.connected && listener.connects >= 2, 15_000);
      await waitFor('the event emitted during the blackhole relayed', () => delivered.length === 2);
      const last = await emitOne();
      await waitFor('an event after recovery woken by NOTIFY', () => delivered.includes(last));
    } finally {
      await relay.close();
    }
    const [row] = await t.db.query<{ rows: number; unsent: number }>(
      `SELECT count(*)::int AS rows, count(*) FILTER (WHERE status <> 'SENT')::int AS unsent FROM outbox_events`,
    );
    assertLedger('listen-keepalive', {
      ...emptyLedger(),
      offered: offered.length,
      accepted: row?.rows ?? 0,
      ...reconcile(offered, delivered),
      stuck: row?.unsent ?? 0,
    });
  });
});
