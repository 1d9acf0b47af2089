/**
 * Review 16 finding (fails; all three pass on f0b774c^): after a failed send, a cluster that goes
 * silent makes the next publish wait far past its confirmTimeoutMs, and in a relay spend an attempt.
 *
 * A record the topic refuses (MESSAGE_TOO_LARGE) fails its send, so SequencedSends retires the
 * producer and starts the replacement at once; the cluster then goes silent (a paused broker: TCP
 * connections accepted, nothing answered). The next publish waits for the replacement
 * (KafkaPublisher.producerReady) with no deadline before its confirmTimeoutMs even starts: only
 * the client's requestTimeoutMs (30 s by default, 8 s here) ends the replacement's connect
 * (ApiVersions unanswered), both clients. Before f0b774c the replacement was charged to the
 * send's deadline and the publish was `unavailable` after confirmTimeoutMs (2 s), as the README
 * promises ("a silent cluster costs a publish confirmTimeoutMs"). It matters: a relay whose lease
 * is longer than confirmTimeoutMs (4 s here, the setup review14-chunkDeadlines calls sound) gives
 * up on the batch at lease.duration and spends an attempt on every row ("publisher did not
 * answer within lease.duration"), where a silent cluster cost none before; the relay's cycle and
 * circuit are held requestTimeoutMs instead of confirmTimeoutMs.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { createRelay, emitMany } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { KafkaConnection, KafkaPublisher, deleteTopics, ensureTopics } from '../src';
import { brokers, outboxMessage, silentLogger, testConnection, uniqueName } from './support';

jest.setTimeout(120_000);

/** A link to the first broker that goes silent (both ways) once armed and a new connection opens. */
class SilencingLink {
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;
  private armed = false;
  silent = false;

  constructor() {
    const [host, port] = brokers()[0]!.split(':');
    this.server = createServer((client) => {
      if (this.armed) this.silent = true;
      const upstream = connect(Number(port), host!);
      this.sockets.add(client);
      this.sockets.add(upstream);
      client.on('data', (data) => this.silent || upstream.write(data));
      upstream.on('data', (data) => this.silent || client.destroyed || client.write(data));
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('close', end).on('error', end);
      upstream.on('close', end).on('error', end);
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  /** From the next new connection on, the cluster answers nothing (old connections included). */
  arm(): void {
    this.armed = true;
  }

  /**
   * kafkajs: every broker socket goes through the link. @platformatic/kafka: the link is its
   * bootstrap broker (where a producer's connect, ApiVersions, goes); produce requests go to the
   * leader the cluster advertises.
   */
  connection(
    clientId: string,
    requestTimeoutMs: number,
    client: 'kafkajs' | 'platformatic',
  ): KafkaConnection {
    const port = (this.server.address() as { port: number }).port;
    if (client === 'platformatic')
      return new KafkaConnection({
        brokers: [`127.0.0.1:${port}`],
        client,
        clientId,
        logger: silentLogger,
        requestTimeoutMs,
      });
    return new KafkaConnection({
      brokers: brokers(),
      client: 'kafkajs',
      clientId,
      kafkaLogLevel: 'nothing',
      logger: silentLogger,
      requestTimeoutMs,
      kafkaConfig: {
        socketFactory: ({ onConnect }: { onConnect: () => void }) => connect(port, '127.0.0.1', onConnect),
      },
    });
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

const admin = testConnection();
const topic = uniqueName('review16-silent-replacement');
let link: SilencingLink;
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
  await ensureTopics(admin, [{ topic, partitions: 1, configs: { 'max.message.bytes': '2000' } }]);
});

afterAll(async () => {
  await deleteTopics(admin, [topic]);
  await database.drop();
});

test.each(['kafkajs', 'platformatic'] as const)(
  '%s: a publish after a refused record, the cluster then silent, settles within its confirmTimeoutMs (unavailable)',
  async (client) => {
    const confirmTimeoutMs = 2_000;
    link = new SilencingLink();
    await link.start();
    const publisher = new KafkaPublisher(link.connection(`ferry-review16-silent-${client}`, 8_000, client), {
      confirmTimeoutMs,
    });
    try {
      const first = outboxMessage({ destination: topic, payload: { n: 0 } });
      expect((await publisher.publish([first], new AbortController().signal))[0]!.status).toBe('sent');

      link.arm();
      const refused = outboxMessage({ destination: topic, payload: { filler: 'x'.repeat(5_000) } });
      expect((await publisher.publish([refused], new AbortController().signal))[0]!.status).toBe('permanent');

      const next = outboxMessage({ destination: topic, payload: { n: 1 } });
      const started = Date.now();
      const [outcome] = await publisher.publish([next], new AbortController().signal);
      const elapsed = Date.now() - started;
      expect(link.silent).toBe(true);
      expect({ status: outcome!.status, withinBudget: elapsed < confirmTimeoutMs + 1_500, elapsed }).toEqual({
        status: 'unavailable',
        withinBudget: true,
        elapsed,
      });
    } finally {
      await publisher.close();
      await link.close();
    }
  },
);

// In a relay, the publish now outlasts a lease longer than confirmTimeoutMs (the setup
// review14-chunkDeadlines calls sound): the relay gives up on the batch at lease.duration and
// spends an attempt on every row, where the cluster's silence cost none before (`unavailable`).
test('kafkajs, in a relay: an event published after a refused record, the cluster then silent, spends no attempt', async () => {
  link = new SilencingLink();
  await link.start();
  const publisher = new KafkaPublisher(link.connection('ferry-review16-silent-relay', 8_000, 'kafkajs'), {
    confirmTimeoutMs: 2_000,
  });
  const relay = createRelay({
    db: database.db,
    publisher,
    logger: silentLogger,
    options: { lease: { duration: 4_000, heartbeatInterval: 1_000 } },
  });
  try {
    const first = outboxMessage({ destination: topic, payload: { n: 0 } });
    expect((await publisher.publish([first], new AbortController().signal))[0]!.status).toBe('sent');
    link.arm();
    const refused = outboxMessage({ destination: topic, payload: { filler: 'x'.repeat(5_000) } });
    expect((await publisher.publish([refused], new AbortController().signal))[0]!.status).toBe('permanent');

    await emitMany(database.db, [{ type: 'doc.stored', destination: topic, payload: { n: 1 } }]);
    await relay.runOnce();
    const [row] = await database.db.query<{ status: string; attempts: number; error: string | null }>(
      `SELECT status, retry_count::int AS attempts, last_error AS error FROM outbox_events`,
    );
    expect(link.silent).toBe(true);
    // Before f0b774c: PENDING, 0 attempts (unavailable after confirmTimeoutMs).
    expect(row).toEqual({ status: 'PENDING', attempts: 0, error: expect.not.stringMatching(/lease/) });
  } finally {
    await relay.close();
    await publisher.close();
    await link.close();
  }
});
