/**
 * RabbitMQ refuses one publish of a relay batch by closing the confirm channel (a channel
 * exception), and every other publish on that channel fails with it. Only 404 NOT_FOUND (an
 * exchange deleted since it was seen) was told apart: a 403 ACCESS_REFUSED (an `internal`
 * exchange; a user whose write permission or topic permission leaves one exchange or routing key
 * out) reported every message of the batch `retryable`, so each healthy neighbour spent an
 * attempt for another event's destination, and went FAILED with it.
 *
 * Expected: only the refused event spends attempts (FAILED with the broker's reason); its
 * neighbours spend none and are sent within a few relay cycles; a key's later event never
 * overtakes its refused head. Exchange names are hostile: quotes, any Unicode, and long enough
 * for the broker to cut its reply text (252 bytes and "...", inside a multibyte character), where
 * the cut name is a prefix of another exchange of the batch.
 */
import { createRelay, emitMany, type OutboxEventInput, type Relay } from '@ferry/core';
import { RabbitConnection, RabbitPublisher } from '@ferry/rabbitmq';
import type { Channel } from 'amqplib';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import {
  AMQP_URL,
  addUser,
  addVhost,
  deleteUser,
  deleteVhost,
  openTestBroker,
  setPermissions,
  setTopicPermissions,
  uniqueName,
  type TestBroker,
} from './support/broker';
import { neverAborted, outboxMessage } from './support/messages';

jest.setTimeout(120_000);

let database: TestDatabase;
let broker: TestBroker;
const cleanup: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  broker = await openTestBroker();
});

afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
  await database.db.query('DELETE FROM outbox_events');
});

afterAll(async () => {
  await broker.close();
  await database.drop();
});

interface Row {
  id: string;
  status: string;
  retry_count: number;
  last_error: string | null;
}

async function rows(): Promise<Map<string, Row>> {
  const found = await database.db.query<Row>(
    `SELECT id::text AS id, status, retry_count, last_error FROM outbox_events ORDER BY seq`,
  );
  return new Map(found.map((row) => [row.id, row]));
}

/** A fanout exchange bound to a queue of its own, removed after the test. */
async function healthyExchange(channel: Channel, name: string): Promise<string> {
  const queue = uniqueName('refused_q');
  await channel.assertExchange(name, 'fanout', { durable: false });
  await channel.assertQueue(queue, { durable: false });
  await channel.bindQueue(queue, name, '');
  cleanup.push(
    () => channel.deleteExchange(name),
    () => channel.deleteQueue(queue),
  );
  return queue;
}

/** Every message id in `queue` (the queue is emptied). */
async function deliveredIds(channel: Channel, queue: string): Promise<string[]> {
  const ids: string[] = [];
  for (;;) {
    const message = await channel.get(queue, { noAck: true });
    if (message === false) return ids;
    ids.push(message.properties.messageId as string);
  }
}

function newRelay(publisher: RabbitPublisher): Relay {
  return createRelay({
    db: database.db,
    publisher,
    logger: pino({ level: 'silent' }),
    options: {
      retry: { initialDelay: 0 },
      // Every cycle claims: a cycle of only unavailable outcomes must not pause the test.
      circuit: { failureThreshold: 1_000 },
    },
  });
}

/** Relay cycles until `done` holds, at most `cycles` of them (a bounded number of cycles). */
async function cyclesUntil(relay: Relay, done: (current: Map<string, Row>) => boolean, cycles: number) {
  for (let cycle = 0; cycle < cycles; cycle += 1) {
    if (done(await rows())) return;
    await relay.runOnce();
  }
}

const MAX_RETRIES = 3;

/**
 * Emits `healthy` events around one refused event (and a keyed pair: its head refused, its later
 * event to a healthy exchange), runs the relay, and checks the outcomes.
 */
async function expectOnlyTheRefusedCharged(
  publisher: RabbitPublisher,
  queues: Channel,
  refused: { destination: string; reason: RegExp },
  healthy: readonly { destination: string; queue: string }[],
): Promise<void> {
  const before: OutboxEventInput[] = healthy.map((h, n) => ({
    type: 'good.before',
    destination: h.destination,
    payload: { n },
    maxRetries: MAX_RETRIES,
  }));
  const after: OutboxEventInput[] = healthy.map((h, n) => ({
    type: 'good.after',
    destination: h.destination,
    payload: { n },
    maxRetries: MAX_RETRIES,
  }));
  const key = uniqueName('key');
  const { ids } = await emitMany(database.db, [
    ...before,
    {
      type: 'refused',
      destination: refused.destination,
      payload: { refused: true },
      maxRetries: MAX_RETRIES,
    },
    {
      type: 'refused.head',
      destination: refused.destination,
      payload: {},
      orderingKey: key,
      maxRetries: MAX_RETRIES,
    },
    ...after,
    {
      type: 'good.later',
      destination: healthy[0]!.destination,
      payload: {},
      orderingKey: key,
      maxRetries: MAX_RETRIES,
    },
  ]);
  const beforeIds = ids.slice(0, before.length);
  const [refusedId, headId] = ids.slice(before.length, before.length + 2) as [string, string];
  const afterIds = ids.slice(before.length + 2, before.length + 2 + after.length);
  const laterId = ids[ids.length - 1]!;
  const healthyIds = [...beforeIds, ...afterIds];
  const relay = newRelay(publisher);
  try {
    // Three attempts each for the refused events, a few cycles more for their neighbours.
    await cyclesUntil(
      relay,
      (current) =>
        current.get(refusedId)?.status === 'FAILED' &&
        current.get(headId)?.status === 'FAILED' &&
        healthyIds.every((id) => current.get(id)?.status === 'SENT'),
      3 * MAX_RETRIES + 3,
    );
    const current = await rows();
    const summary = (id: string) => {
      const row = current.get(id)!;
      return { status: row.status, retry_count: row.retry_count };
    };
    // The neighbours: sent, no attempt spent.
    expect(healthyIds.map(summary)).toEqual(healthyIds.map(() => ({ status: 'SENT', retry_count: 0 })));
    // The refused events: FAILED, having spent their attempts, with the broker's reason.
    for (const id of [refusedId, headId]) {
      expect(summary(id)).toEqual({ status: 'FAILED', retry_count: MAX_RETRIES });
      expect(current.get(id)!.last_error).toMatch(refused.reason);
    }
    // The key's later event never overtook its refused head (blocked behind the FAILED head).
    expect(summary(laterId)).toEqual({ status: 'PENDING', retry_count: 0 });
    const delivered = new Set<string>();
    for (const queue of new Set(healthy.map((h) => h.queue)))
      for (const id of await deliveredIds(queues, queue)) delivered.add(id);
    for (const id of healthyIds) expect(delivered).toContain(id);
    expect(delivered).not.toContain(laterId);
  } finally {
    await relay.close();
  }
}

test('403: a publish to an internal exchange spends the attempts of that event only; its neighbours are sent', async () => {
  const internal = uniqueName('refused_internal');
  await broker.channel.assertExchange(internal, 'fanout', { durable: false, internal: true });
  cleanup.push(() => broker.channel.deleteExchange(internal));
  const live = uniqueName('refused_live');
  const queue = await healthyExchange(broker.channel, live);
  const connection = new RabbitConnection({ url: AMQP_URL, connectionName: uniqueName('refused_internal') });
  const publisher = new RabbitPublisher(connection, { confirmTimeoutMs: 5_000 });
  cleanup.push(
    () => connection.close(),
    () => publisher.close(),
  );
  await expectOnlyTheRefusedCharged(
    publisher,
    broker.channel,
    { destination: internal, reason: /ACCESS_REFUSED.*internal exchange/ },
    [
      { destination: live, queue },
      { destination: live, queue },
      { destination: `/${queue}`, queue },
    ],
  );
  // The exchange known to refuse, a later batch puts it on no channel of its neighbours: each of
  // them is confirmed and delivered once (a publish ahead of a refused one on a shared channel
  // reaches the queue unconfirmed, and goes again).
  const batch = [
    outboxMessage({ destination: live }),
    outboxMessage({ destination: live }),
    outboxMessage({ destination: internal }),
    outboxMessage({ destination: live }),
  ];
  const outcomes = await publisher.publish(batch, neverAborted());
  expect(outcomes.map((outcome) => outcome.status)).toEqual(['sent', 'sent', 'retryable', 'sent']);
  expect(outcomes[2]).toMatchObject({ error: expect.stringMatching(/ACCESS_REFUSED.*internal exchange/) });
  expect((await deliveredIds(broker.channel, queue)).sort()).toEqual(
    [batch[0]!.id, batch[1]!.id, batch[3]!.id].sort(),
  );
});

test('403 with hostile names: a reply text cut inside a multibyte character, its name a prefix of a healthy exchange of the batch', async () => {
  // Over 255 bytes of reply text: the broker cuts it inside the 'é' run, so the name it quotes is
  // a prefix of both exchanges (they differ only in their last character).
  const head = `${uniqueName('refused')}_l'été «ü» "q" `;
  // The broker keeps 252 bytes of "ACCESS_REFUSED - cannot publish to internal exchange '<name>...":
  // an odd number of bytes into the 'é' run (2 bytes each) cuts one in half.
  const kept = 252 - Buffer.byteLength("ACCESS_REFUSED - cannot publish to internal exchange '");
  const pad = (kept - Buffer.byteLength(head)) % 2 === 0 ? '_' : '';
  const stem = `${head}${pad}${'é'.repeat(100)}`;
  expect(Buffer.byteLength(`${stem}A`)).toBeLessThanOrEqual(255);
  const internal = `${stem}A`;
  const twin = `${stem}B`;
  const quoted = `${uniqueName('refused')}_it's 'quoted' 🐇`;
  await broker.channel.assertExchange(internal, 'fanout', { durable: false, internal: true });
  cleanup.push(() => broker.channel.deleteExchange(internal));
  const twinQueue = await healthyExchange(broker.channel, twin);
  const quotedQueue = await healthyExchange(broker.channel, quoted);
  const connection = new RabbitConnection({ url: AMQP_URL, connectionName: uniqueName('refused_hostile') });
  const publisher = new RabbitPublisher(connection, { confirmTimeoutMs: 5_000 });
  cleanup.push(
    () => connection.close(),
    () => publisher.close(),
  );
  await expectOnlyTheRefusedCharged(
    publisher,
    broker.channel,
    { destination: internal, reason: /ACCESS_REFUSED/ },
    [
      { destination: twin, queue: twinQueue },
      { destination: quoted, queue: quotedQueue },
      { destination: twin, queue: twinQueue },
    ],
  );
});

describe('permissions of the virtual host', () => {
  const vhost = uniqueName('refused_vh');
  const user = uniqueName('refused_user');
  const password = 'refused-pw';

  beforeAll(async () => {
    await addVhost(vhost);
    await addUser(user, password);
    // Write access to every exchange but those whose name starts with "no_write".
    await setPermissions(vhost, user, { configure: '.*', write: '^(?!no_write).*', read: '.*' });
    // On exchange "topics", only routing keys starting with "ok.".
    await setTopicPermissions(vhost, user, 'topics', { write: '^ok\\.', read: '.*' });
  });

  afterAll(async () => {
    await deleteUser(user);
    await deleteVhost(vhost);
  });

  async function openAdmin(): Promise<Channel> {
    const amqp = await import('amqplib');
    const model = await amqp.connect(`${AMQP_URL}/${encodeURIComponent(vhost)}`);
    cleanup.push(() => model.close());
    return model.createChannel();
  }

  function userPublisher(name: string): RabbitPublisher {
    const url = new URL(AMQP_URL);
    url.username = user;
    url.password = password;
    url.pathname = `/${encodeURIComponent(vhost)}`;
    const connection = new RabbitConnection({ url: url.toString(), connectionName: uniqueName(name) });
    const publisher = new RabbitPublisher(connection, { confirmTimeoutMs: 5_000 });
    cleanup.push(
      () => connection.close(),
      () => publisher.close(),
    );
    return publisher;
  }

  test('403: an exchange the user may not write to spends the attempts of that event only', async () => {
    const channel = await openAdmin();
    const denied = 'no_write_orders';
    await channel.assertExchange(denied, 'fanout', { durable: false });
    cleanup.push(() => channel.deleteExchange(denied));
    const live = 'orders';
    const queue = await healthyExchange(channel, live);
    await expectOnlyTheRefusedCharged(
      userPublisher('refused_write'),
      channel,
      { destination: denied, reason: /ACCESS_REFUSED.*no_write_orders/ },
      [
        { destination: live, queue },
        { destination: live, queue },
      ],
    );
  });

  test('403: a routing key the topic permission refuses spends the attempts of that event only, the same exchange keeps taking the others', async () => {
    const channel = await openAdmin();
    const topics = 'topics';
    await channel.assertExchange(topics, 'topic', { durable: false });
    const queue = uniqueName('refused_topic_q');
    await channel.assertQueue(queue, { durable: false });
    await channel.bindQueue(queue, topics, '#');
    cleanup.push(
      () => channel.deleteExchange(topics),
      () => channel.deleteQueue(queue),
    );
    await expectOnlyTheRefusedCharged(
      userPublisher('refused_topic'),
      channel,
      { destination: `${topics}/bad.key`, reason: /ACCESS_REFUSED.*topic 'bad\.key'/ },
      [
        { destination: `${topics}/ok.one`, queue },
        { destination: `${topics}/ok.two`, queue },
      ],
    );
  });
});

test('a message published again after a refusal never overtakes an earlier message of its key that was not sent', async () => {
  const internal = uniqueName('refused_order_internal');
  await broker.channel.assertExchange(internal, 'fanout', { durable: false, internal: true });
  const unbound = uniqueName('refused_order_unbound');
  await broker.channel.assertExchange(unbound, 'fanout', { durable: false });
  cleanup.push(
    () => broker.channel.deleteExchange(internal),
    () => broker.channel.deleteExchange(unbound),
  );
  const live = uniqueName('refused_order_live');
  const queue = await healthyExchange(broker.channel, live);
  const connection = new RabbitConnection({ url: AMQP_URL, connectionName: uniqueName('refused_order') });
  const publisher = new RabbitPublisher(connection, { confirmTimeoutMs: 5_000 });
  cleanup.push(
    () => connection.close(),
    () => publisher.close(),
  );
  const key = uniqueName('key');
  const batch = [
    outboxMessage({ destination: unbound, orderingKey: key }), // returned: no queue takes it
    outboxMessage({ destination: internal }), // refused: closes the channel
    outboxMessage({ destination: live, orderingKey: key }), // lost with the channel
    outboxMessage({ destination: live }),
  ];
  const outcomes = await publisher.publish(batch, neverAborted());
  expect(outcomes.map((outcome) => outcome.status)).toEqual([
    'retryable',
    'retryable',
    'unavailable',
    'sent',
  ]);
  expect(await deliveredIds(broker.channel, queue)).toEqual([batch[3]!.id]);
});

test('two publish calls at once on one publisher (the relay pipelines two): a refusal in one charges nothing of the other', async () => {
  const turned = uniqueName('refused_pipelined_turned');
  await broker.channel.assertExchange(turned, 'fanout', { durable: false });
  cleanup.push(() => broker.channel.deleteExchange(turned));
  const live = uniqueName('refused_pipelined_live');
  const queue = await healthyExchange(broker.channel, live);
  const connection = new RabbitConnection({ url: AMQP_URL, connectionName: uniqueName('refused_pipelined') });
  const publisher = new RabbitPublisher(connection, { confirmTimeoutMs: 5_000 });
  cleanup.push(
    () => connection.close(),
    () => publisher.close(),
  );
  // Both exchanges seen once (the publisher checks neither again), then one turned internal: both
  // calls publish at once on the shared channel, the other call's messages after the refused one.
  await publisher.publish(
    [outboxMessage({ destination: live }), outboxMessage({ destination: turned })],
    neverAborted(),
  );
  await deliveredIds(broker.channel, queue);
  await broker.channel.deleteExchange(turned);
  await broker.channel.assertExchange(turned, 'fanout', { durable: false, internal: true });
  const refusedCall = [outboxMessage({ destination: turned })];
  const otherCall = Array.from({ length: 20 }, () => outboxMessage({ destination: live }));
  const [refusedOutcomes, otherOutcomes] = await Promise.all([
    publisher.publish(refusedCall, neverAborted()),
    publisher.publish(otherCall, neverAborted()),
  ]);
  expect(refusedOutcomes).toEqual([
    { id: refusedCall[0]!.id, status: 'retryable', error: expect.stringMatching(/internal exchange/) },
  ]);
  expect(otherOutcomes.map((outcome) => outcome.status)).toEqual(otherCall.map(() => 'sent'));
  const delivered = new Set(await deliveredIds(broker.channel, queue));
  for (const message of otherCall) expect(delivered).toContain(message.id);
});
