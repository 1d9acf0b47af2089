/**
 * Review 15 finding (91f910d: the sends one at a time after a failed send share one
 * confirmTimeoutMs deadline, the rest `unavailable`). A message-level fault (one record the topic
 * refuses: MESSAGE_TOO_LARGE for the topic's max.message.bytes) fails the whole send, so the
 * publish goes one at a time to isolate it. Over a cluster that answers every request, only
 * slowly (0.7 s per answer here), the shared deadline passes after a few healthy records: the
 * poison record is never tried and is reported `unavailable` (no attempt spent, "the cluster"),
 * though the cluster answered everything. The relay hands unavailable rows back behind the rows
 * already due, so with events still arriving the poison is never at the head of a batch: every
 * cycle pays a failed batch send plus one-at-a-time sends, and the poison is never charged or
 * made FAILED (a livelock that also collapses throughput to a few records per confirmTimeoutMs).
 * Expected: the record that caused the failure is isolated (`permanent`) in a cycle where the
 * cluster answered.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { KafkaConnection, KafkaPublisher, deleteTopics, ensureTopics } from '../src';
import { brokers, outboxMessage, silentLogger, testConnection, uniqueName } from './support';

jest.setTimeout(120_000);

const admin = testConnection();
const topic = uniqueName('review15-poison');
let proxy: Server;
let proxyPort = 0;
const sockets = new Set<Socket>();
const ANSWER_DELAY_MS = 700;

beforeAll(async () => {
  // The topic takes records of at most 3 000 bytes: a 10 KB one is refused (MESSAGE_TOO_LARGE).
  await ensureTopics(admin, [{ topic, partitions: 1, configs: { 'max.message.bytes': '3000' } }]);
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
});

test('a record the topic refuses, behind healthy records on a slow cluster: isolated (permanent), not unavailable cycle after cycle', async () => {
  const connection = new KafkaConnection({
    brokers: brokers(),
    client: 'kafkajs',
    clientId: 'ferry-review15-poison',
    kafkaLogLevel: 'nothing',
    logger: silentLogger,
    kafkaConfig: {
      socketFactory: ({ onConnect }: { onConnect: () => void }) => connect(proxyPort, '127.0.0.1', onConnect),
    },
  });
  const publisher = new KafkaPublisher(connection, { confirmTimeoutMs: 1_500 });
  try {
    const [warm] = await publisher.publish(
      [outboxMessage({ destination: topic })],
      new AbortController().signal,
    );
    expect(warm?.status).toBe('sent');
    const poison = outboxMessage({ destination: topic, payload: { filler: 'x'.repeat(10_000) } });
    const poisonOutcomes: string[] = [];
    // Three relay cycles: each batch has the events that arrived since ahead of the poison (the
    // relay puts unavailable rows behind the rows already due).
    for (let cycle = 0; cycle < 3; cycle += 1) {
      const fresh = Array.from({ length: 4 }, (_, n) =>
        outboxMessage({ destination: topic, payload: { cycle, n } }),
      );
      const outcomes = await publisher.publish([...fresh, poison], new AbortController().signal);
      poisonOutcomes.push(outcomes.find((o) => o.id === poison.id)!.status);
    }
    // Before: ['unavailable', 'unavailable', 'unavailable'] (never tried; no attempt spent).
    expect(poisonOutcomes).toContain('permanent');
    expect(poisonOutcomes).not.toContain('unavailable');
  } finally {
    await publisher.close();
  }
});
