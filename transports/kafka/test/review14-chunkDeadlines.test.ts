/**
 * Review 14, change a59e19a (a publish goes in sends of at most maxMessageBytes): each send gets
 * a fresh confirmTimeoutMs deadline, so a publish is no longer bounded by confirmTimeoutMs but by
 * chunks x confirmTimeoutMs (a relay batch of 500 x 215 KB is ~107 sends). A cluster that answers
 * every request, only slowly (here 0.7 s per answer; in production a degraded broker taking
 * >2.8 s per 1 MiB send against the default 300 s lease), makes the publish outlast the relay's
 * lease.duration: the relay gives up on the whole batch, discards the `sent` outcomes of the
 * chunks already written, spends an attempt on every row and publishes them again. Before the
 * change the same batch was one send answered in 0.7 s. A shared deadline for the publish (the
 * remaining chunks `unavailable` once it passed) would have lost nothing.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { createRelay, emitMany } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { KafkaConnection, KafkaPublisher, deleteTopics, ensureTopics } from '../src';
import { brokers, endOffsets, outboxMessage, silentLogger, testConnection, uniqueName } from './support';

jest.setTimeout(120_000);

const admin = testConnection();
const topic = uniqueName('review14-chunk-deadlines');
let database: TestDatabase;
let proxy: Server;
let proxyPort = 0;
const sockets = new Set<Socket>();

/** A proxy that forwards the broker's answers ANSWER_DELAY_MS late (in order): a slow cluster. */
const ANSWER_DELAY_MS = 700;

beforeAll(async () => {
  database = await createTestDatabase();
  await ensureTopics(admin, [{ topic, partitions: 1 }]);
  const [host, port] = brokers()[0]!.split(':');
  proxy = createServer((client) => {
    const upstream = connect(Number(port), host!);
    sockets.add(client);
    sockets.add(upstream);
    client.on('data', (data) => upstream.write(data));
    let last = 0;
    upstream.on('data', (data) => {
      const at = Math.max(Date.now() + ANSWER_DELAY_MS, last);
      last = at;
      setTimeout(() => client.destroyed || client.write(data), at - Date.now());
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyPort = (proxy.address() as { port: number }).port;
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => proxy.close(resolve));
  await deleteTopics(admin, [topic]);
  await database.drop();
});

test('a relay batch split in chunks is SENT within the lease when every answer comes well inside confirmTimeoutMs', async () => {
  const filler = 'x'.repeat(20_000);
  await emitMany(
    database.db,
    Array.from({ length: 8 }, (_, index) => ({
      type: 'doc.stored',
      destination: topic,
      payload: { index, filler },
    })),
  );
  const connection = new KafkaConnection({
    brokers: brokers(),
    client: 'kafkajs',
    clientId: 'ferry-review14-chunks',
    kafkaLogLevel: 'nothing',
    logger: silentLogger,
    kafkaConfig: {
      socketFactory: ({ onConnect }: { onConnect: () => void }) => connect(proxyPort, '127.0.0.1', onConnect),
    },
  });
  // One event per send (20 KB each, maxMessageBytes 30 000): 8 sends of ~0.7 s each. Each is
  // answered long before its 3 s deadline; the lease (4 s) is longer than confirmTimeoutMs.
  const maxMessageBytes = Number(process.env.REVIEW14_MAX_BYTES ?? 30_000);
  const publisher = new KafkaPublisher(connection, { confirmTimeoutMs: 3_000, maxMessageBytes });
  // The producer connected first (its handshake is slow too): only the sends are timed below.
  const [warm] = await publisher.publish(
    [outboxMessage({ destination: topic })],
    new AbortController().signal,
  );
  expect(warm?.status).toBe('sent');
  const relay = createRelay({
    db: database.db,
    publisher,
    logger: silentLogger,
    options: { lease: { duration: 4_000, heartbeatInterval: 1_000 } },
  });
  try {
    const cycle = await relay.runOnce();
    const written = [...(await endOffsets(admin, topic)).values()].reduce((sum, o) => sum + Number(o), 0);
    const [row] = await database.db.query<{ sent: number; retried: number }>(
      `SELECT count(*) FILTER (WHERE status = 'SENT')::int AS sent,
              count(*) FILTER (WHERE status <> 'SENT')::int AS retried FROM outbox_events`,
    );
    // Received: sent 0, not sent 8, while about half the events are already in the topic (they
    // will be published a second time on the next cycle).
    expect({ sent: cycle.sent, rowsSent: row!.sent, rowsNotSent: row!.retried, inTopic: written }).toEqual({
      sent: 8,
      rowsSent: 8,
      rowsNotSent: 0,
      inTopic: 9,
    });
  } finally {
    await relay.close();
    await publisher.close();
  }
});
