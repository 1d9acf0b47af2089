import { FERRY_HEADERS } from '@ferry/core';
import {
  RabbitConnection,
  RabbitPublisher,
  attachRabbitConsumer,
  deleteWorkQueue,
  type RabbitConsumer,
  type RabbitConsumerOptions,
} from '@ferry/rabbitmq';
import type { GetMessage } from 'amqplib';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import {
  AMQP_URL,
  closeConnectionsNamed,
  consumerCount,
  exchangeExists,
  openTestBroker,
  unackedCount,
  uniqueName,
  waitFor,
  type TestBroker,
} from './support/broker';
import { neverAborted, outboxMessage, outboxMessages } from './support/messages';
import { PgTestAcceptor } from '../../../test-support/pgAcceptor';

describe('attachRabbitConsumer', () => {
  let database: TestDatabase;
  let broker: TestBroker;
  let acceptor: PgTestAcceptor;
  let queue: string;
  let connectionName: string;
  let connection: RabbitConnection;
  let publisher: RabbitPublisher;
  let consumer: RabbitConsumer | null;

  beforeAll(async () => {
    database = await createTestDatabase({ migrate: false });
    broker = await openTestBroker();
  });

  afterAll(async () => {
    await broker.close();
    await database.drop();
  });

  beforeEach(async () => {
    await database.db.execute('DROP TABLE IF EXISTS test_inbox');
    acceptor = await PgTestAcceptor.create(database.db);
    await acceptor.refuse(false);
    queue = uniqueName('work');
    connectionName = uniqueName('consumer');
    connection = new RabbitConnection({
      url: AMQP_URL,
      connectionName,
      reconnect: { initialMs: 50, maxMs: 500 },
    });
    publisher = new RabbitPublisher({ connection, routes: {} });
    consumer = null;
  });

  afterEach(async () => {
    acceptor.release();
    await consumer?.close();
    await publisher.close();
    await connection.close();
    await deleteWorkQueue(broker.channel, { queue });
  });

  async function attach(options: Partial<RabbitConsumerOptions> = {}): Promise<RabbitConsumer> {
    consumer = attachRabbitConsumer(acceptor, {
      connection,
      queue,
      consumer: 'billing',
      prefetch: 50,
      retryBackoff: { initialMs: 100, maxMs: 200 },
      ...options,
    });
    await consumer.ready();
    return consumer;
  }

  /** Publishes straight to the work queue through the default exchange. */
  function toQueue() {
    return `/${queue}`;
  }

  function rawPublish(body: Buffer | string, options: Parameters<TestBroker['channel']['sendToQueue']>[2]) {
    broker.channel.sendToQueue(queue, Buffer.isBuffer(body) ? body : Buffer.from(body), options);
  }

  async function deadLetters(count: number): Promise<GetMessage[]> {
    const collected: GetMessage[] = [];
    return waitFor(`${count} dead letters`, async () => {
      collected.push(...(await broker.drain(`${queue}.dlq`)));
      return collected.length >= count ? collected : undefined;
    });
  }

  it('accepts each message once although duplicates were published, and acks everything', async () => {
    await attach();
    const messages = outboxMessages(30, { destination: toQueue() });
    const duplicates = messages.slice(0, 10);

    const outcomes = await publisher.publish([...messages, ...duplicates], neverAborted());
    expect(outcomes.every((o) => o.status === 'sent')).toBe(true);

    await waitFor('40 deliveries accepted and acked', async () =>
      acceptor.seen.length >= 40 &&
      (await broker.readyCount(queue)) === 0 &&
      (await unackedCount(queue)) === 0
        ? true
        : undefined,
    );
    const stored = await acceptor.storedIds();
    const expected = messages.map((m) => m.id);
    expect({
      missing: expected.filter((id) => !stored.includes(id)),
      extra: stored.filter((id, i) => !expected.includes(id) || stored.indexOf(id) !== i),
    }).toEqual({ missing: [], extra: [] });
    expect(await broker.readyCount(`${queue}.dlq`)).toBe(0);
    const first = (await acceptor.stored()).find((row) => row.messageId === messages[0]!.id)!;
    expect(first).toMatchObject({ tenantId: 'tenant-a', type: 'order.placed' });
    expect(first.headers).toMatchObject({
      'x-app': 'shop',
      [FERRY_HEADERS.correlationId]: messages[0]!.correlationId,
    });
  });

  it('accepts deliveries that arrived together through one acceptMany call', async () => {
    acceptor.hold();
    await attach({ maxBatchSize: 50 });
    await publisher.publish([outboxMessage({ destination: toQueue() })], neverAborted());
    await waitFor('the first batch to be held', () => (acceptor.held() === 1 ? true : undefined));
    await publisher.publish(outboxMessages(20, { destination: toQueue() }), neverAborted());
    await waitFor('all deliveries pushed to the consumer', async () =>
      (await broker.readyCount(queue)) === 0 && (await unackedCount(queue)) === 21 ? true : undefined,
    );

    acceptor.release();

    await waitFor('21 stored', async () => ((await acceptor.storedIds()).length === 21 ? true : undefined));
    expect(acceptor.batches).toEqual([1, 20]);
  });

  it('does not ack a delivery while its acceptance has not committed', async () => {
    acceptor.hold();
    await attach();
    await publisher.publish(outboxMessages(5, { destination: toQueue() }), neverAborted());
    await waitFor('acceptance to start', () => (acceptor.held() > 0 ? true : undefined));
    await waitFor('all five delivered', async () =>
      (await broker.readyCount(queue)) === 0 ? true : undefined,
    );

    expect(await unackedCount(queue)).toBe(5);
    acceptor.release();
    await waitFor('every delivery acked', async () => ((await unackedCount(queue)) === 0 ? true : undefined));
    expect(await acceptor.storedIds()).toHaveLength(5);
  });

  it('dead-letters invalid deliveries with the reason in a header and accepts the valid ones', async () => {
    await attach({ maxPayloadBytes: 200 });
    rawPublish('{"ok":true}', { contentType: 'application/json' });
    rawPublish('{not json', { messageId: 'unparseable', contentType: 'application/json' });
    rawPublish('[1,2]', { messageId: 'array', contentType: 'application/json' });
    rawPublish(JSON.stringify({ big: 'x'.repeat(500) }), {
      messageId: 'large',
      contentType: 'application/json',
    });
    rawPublish('hello', { messageId: 'text', contentType: 'text/plain' });
    rawPublish('{"valid":true}', { messageId: 'valid-1', contentType: 'application/json; charset=utf-8' });

    const dead = await deadLetters(5);

    const reasons = Object.fromEntries(
      dead.map((m) => [m.properties.messageId ?? 'none', m.properties.headers?.[FERRY_HEADERS.rejectReason]]),
    );
    expect(reasons).toEqual({
      none: 'missing_identity',
      unparseable: 'unparseable_body',
      array: 'unparseable_body',
      large: 'payload_too_large',
      text: 'unsupported_content_type',
    });
    await waitFor('the valid one stored', async () =>
      (await acceptor.storedIds()).includes('valid-1') ? true : undefined,
    );
    expect(await acceptor.storedIds()).toEqual(['valid-1']);
    await waitFor('nothing unacked', async () => ((await unackedCount(queue)) === 0 ? true : undefined));
  });

  it('takes identity from the AMQP messageId, then from the configured extractor', async () => {
    await attach({ identity: (m) => (m.properties.headers?.['legacy-id'] as string | undefined) ?? null });
    rawPublish('{"a":1}', { messageId: 'amqp-id', contentType: 'application/json' });
    rawPublish('{"a":2}', { headers: { 'legacy-id': 'legacy-7' }, contentType: 'application/json' });
    rawPublish('{"a":3}', {
      messageId: 'ignored',
      headers: { [FERRY_HEADERS.messageId]: 'ferry-id' },
      contentType: 'application/json',
    });

    await waitFor('three stored', async () => ((await acceptor.storedIds()).length === 3 ? true : undefined));
    expect((await acceptor.storedIds()).sort()).toEqual(['amqp-id', 'ferry-id', 'legacy-7']);
  });

  it('sends deliveries whose acceptance failed round the TTL retry queue, then dead-letters them after the limit', async () => {
    await acceptor.refuse(true);
    await attach({ maxTransportRetries: 2 });
    const messages = outboxMessages(3, { destination: toQueue() });
    await publisher.publish(messages, neverAborted());

    const dead = await deadLetters(3);

    expect(dead.map((m) => m.properties.messageId).sort()).toEqual(messages.map((m) => m.id).sort());
    for (const m of dead) {
      expect(m.properties.headers).toMatchObject({
        [FERRY_HEADERS.rejectReason]: 'transport_retries_exhausted',
        [FERRY_HEADERS.transportAttempts]: '2',
      });
    }
    for (const m of messages) expect(acceptor.seen.filter((id) => id === m.id)).toHaveLength(3);
    expect(await acceptor.storedIds()).toEqual([]);
    expect(await broker.readyCount(queue)).toBe(0);
    expect(await broker.readyCount(`${queue}.retry`)).toBe(0);
  });

  it('accepts a delivery whose acceptance failed once the database takes work again', async () => {
    await acceptor.refuse(true);
    await attach({ maxTransportRetries: 50 });
    const messages = outboxMessages(4, { destination: toQueue() });
    await publisher.publish(messages, neverAborted());
    await waitFor('each refused at least once', () =>
      messages.every((m) => acceptor.seen.includes(m.id)) ? true : undefined,
    );
    expect(await acceptor.storedIds()).toEqual([]);

    await acceptor.refuse(false);

    await waitFor('all four stored', async () =>
      (await acceptor.storedIds()).length === 4 ? true : undefined,
    );
    expect(await broker.readyCount(`${queue}.dlq`)).toBe(0);
  });

  it('recovers after the broker closes its connection mid-stream and loses nothing', async () => {
    acceptor.hold();
    await attach();
    const early = outboxMessages(40, { destination: toQueue() });
    await publisher.publish(early, neverAborted());
    await waitFor('a batch in acceptance', () => (acceptor.held() > 0 ? true : undefined));

    expect(await closeConnectionsNamed(connectionName)).toBe(1);
    acceptor.release();
    await waitFor('the connection to come back', () => (connection.current !== null ? true : undefined));
    const late = outboxMessages(20, { destination: toQueue() });
    await waitFor('late messages sent', async () => {
      const outcomes = await publisher.publish(late, neverAborted());
      return outcomes.every((o) => o.status === 'sent') ? true : undefined;
    });

    const expected = [...early, ...late].map((m) => m.id);
    await waitFor('all sixty stored', async () =>
      (await acceptor.storedIds()).length >= expected.length ? true : undefined,
    );
    const stored = await acceptor.storedIds();
    expect({
      missing: expected.filter((id) => !stored.includes(id)),
      extra: stored.filter((id) => !expected.includes(id)),
    }).toEqual({ missing: [], extra: [] });
    expect(acceptor.seen.length).toBeGreaterThan(expected.length);
    await waitFor('nothing unacked', async () => ((await unackedCount(queue)) === 0 ? true : undefined));
  });

  /** A logger that records the messages of the warnings it is given. */
  function recordingLogger(): { logger: pino.Logger; warnings: string[] } {
    const warnings: string[] = [];
    const logger = pino(
      { level: 'warn' },
      {
        write(line: string) {
          warnings.push((JSON.parse(line) as { msg: string }).msg);
        },
      },
    );
    return { logger, warnings };
  }

  async function expectStoredOnce(expected: readonly string[]): Promise<void> {
    await waitFor(`${expected.length} stored`, async () =>
      (await acceptor.storedIds()).length >= expected.length ? true : undefined,
    );
    const stored = await acceptor.storedIds();
    expect({
      missing: expected.filter((id) => !stored.includes(id)),
      extra: stored.filter((id, i) => !expected.includes(id) || stored.indexOf(id) !== i),
    }).toEqual({ missing: [], extra: [] });
  }

  it('re-attaches on the same connection after the broker closed its channel, re-declaring the topology', async () => {
    const { logger, warnings } = recordingLogger();
    await attach({ logger });
    const model = connection.current;
    // The dead-letter copy of the invalid delivery goes to an exchange that no longer exists:
    // the broker closes the consumer's channel (404), the connection stays up.
    await broker.channel.deleteExchange(`${queue}.dlx`);
    rawPublish('{"n":1}', { messageId: 'valid-1', contentType: 'application/json' });
    rawPublish('{not json', { messageId: 'bad-1', contentType: 'application/json' });
    rawPublish('{"n":2}', { messageId: 'valid-2', contentType: 'application/json' });

    const dead = await deadLetters(1);

    expect(warnings).toContain('ferry.rabbitmq: consumer channel closed; re-attaching');
    expect(
      dead.map((m) => [m.properties.messageId, m.properties.headers?.[FERRY_HEADERS.rejectReason]]),
    ).toEqual([['bad-1', 'unparseable_body']]);
    expect(await exchangeExists(`${queue}.dlx`)).toBe(true);
    const late = outboxMessages(10, { destination: toQueue() });
    expect((await publisher.publish(late, neverAborted())).every((o) => o.status === 'sent')).toBe(true);
    await expectStoredOnce(['valid-1', 'valid-2', ...late.map((m) => m.id)]);
    await waitFor('nothing unacked or ready', async () =>
      (await unackedCount(queue)) === 0 && (await broker.readyCount(queue)) === 0 ? true : undefined,
    );
    expect(await broker.drain(`${queue}.dlq`)).toEqual([]);
    expect(connection.current).toBe(model);
    expect(warnings).not.toContain('ferry.rabbitmq: connection lost; reconnecting');
  });

  it('consumes again on the same connection after the broker cancelled it (work queue deleted)', async () => {
    const { logger, warnings } = recordingLogger();
    await attach({ logger });
    const model = connection.current;
    const early = outboxMessages(10, { destination: toQueue() });
    await publisher.publish(early, neverAborted());
    await expectStoredOnce(early.map((m) => m.id));
    await waitFor('every early delivery acked', async () =>
      (await unackedCount(queue)) === 0 ? true : undefined,
    );

    await broker.channel.deleteQueue(queue);

    await waitFor('the work queue re-declared with its consumer', async () =>
      (await consumerCount(queue)) === 1 ? true : undefined,
    );
    expect(warnings).toContain('ferry.rabbitmq: consumer channel closed; re-attaching');
    const late = outboxMessages(10, { destination: toQueue() });
    expect((await publisher.publish(late, neverAborted())).every((o) => o.status === 'sent')).toBe(true);
    await expectStoredOnce([...early, ...late].map((m) => m.id));
    await waitFor('nothing unacked', async () => ((await unackedCount(queue)) === 0 ? true : undefined));
    expect(connection.current).toBe(model);
  });
});
