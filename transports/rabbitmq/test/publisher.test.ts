import { FERRY_HEADERS } from '@ferry/core';
import { RabbitConnection, RabbitPublisher } from '@ferry/rabbitmq';
import {
  AMQP_URL,
  closeConnectionsNamed,
  openTestBroker,
  uniqueName,
  waitFor,
  type TestBroker,
} from './support/broker';
import { closedPort } from '../../../test-support/closedPort';
import { HoldingProxy } from './support/holdingProxy';
import { neverAborted, outboxMessage, outboxMessages } from './support/messages';

describe('RabbitPublisher', () => {
  let broker: TestBroker;
  let exchange: string;
  let queue: string;
  let connectionName: string;
  let connection: RabbitConnection;
  let publisher: RabbitPublisher;

  beforeEach(async () => {
    broker = await openTestBroker();
    exchange = uniqueName('pub_x');
    queue = uniqueName('pub_q');
    connectionName = uniqueName('publisher');
    await broker.channel.assertExchange(exchange, 'topic', { durable: true });
    await broker.channel.assertQueue(queue, { durable: true });
    await broker.channel.bindQueue(queue, exchange, 'order.*');
    connection = new RabbitConnection({
      url: AMQP_URL,
      connectionName,
      reconnectBackoff: { initialMs: 50, maxMs: 500 },
    });
    publisher = new RabbitPublisher(connection, { defaultDestination: exchange, confirmTimeoutMs: 5_000 });
  });

  afterEach(async () => {
    await publisher.close();
    await publisher.close();
    await connection.close();
    await broker.channel.deleteQueue(queue);
    await broker.channel.deleteExchange(exchange);
    await broker.close();
  });

  it('reports sent only for confirmed messages and stamps the wire format', async () => {
    const messages = outboxMessages(20);
    const outcomes = await publisher.publish(messages, neverAborted());

    expect(outcomes).toEqual(messages.map((m) => ({ id: m.id, status: 'sent' })));
    const received = await broker.drain(queue);
    expect(received.map((r) => r.properties.messageId).sort()).toEqual(messages.map((m) => m.id).sort());
    const first = messages[0]!;
    const wire = received.find((r) => r.properties.messageId === first.id)!;
    expect(JSON.parse(wire.content.toString('utf8'))).toEqual(first.payload);
    expect(wire.properties).toMatchObject({
      contentType: 'application/json',
      deliveryMode: 2,
      type: first.type,
      correlationId: first.correlationId,
      timestamp: Math.floor(first.createdAt.getTime() / 1000),
    });
    expect(wire.properties.headers).toMatchObject({
      'x-app': 'shop',
      [FERRY_HEADERS.messageId]: first.id,
      [FERRY_HEADERS.eventType]: first.type,
      [FERRY_HEADERS.tenantId]: 'tenant-a',
      [FERRY_HEADERS.correlationId]: first.correlationId,
      [FERRY_HEADERS.causationId]: first.causationId,
      [FERRY_HEADERS.traceparent]: first.traceparent,
      [FERRY_HEADERS.tracestate]: first.tracestate,
    });
  });

  it('routes by destination exchange/routingKey before the route table', async () => {
    const routed = new RabbitPublisher(connection, {
      routes: { 'order.placed': { exchange, routingKey: 'order.x' } },
    });
    const byTable = outboxMessage();
    const byDestination = outboxMessage({ destination: `${exchange}/order.y`, type: 'other.type' });
    const unrouted = outboxMessage({ type: 'unknown.type' });

    const outcomes = await routed.publish([byTable, byDestination, unrouted], neverAborted());

    expect(outcomes.map((o) => o.status)).toEqual(['sent', 'sent', 'permanent']);
    const received = await broker.drain(queue);
    expect(received.map((r) => [r.properties.messageId, r.fields.routingKey])).toEqual([
      [byTable.id, 'order.x'],
      [byDestination.id, 'order.y'],
    ]);
    await routed.close();
  });

  it('reports an unroutable message as retryable, not sent, and the rest of its batch as sent', async () => {
    const routable = outboxMessage();
    const unroutable = outboxMessage({ type: 'nobody.listens' });

    const outcomes = await publisher.publish([routable, unroutable], neverAborted());

    expect(outcomes[0]).toEqual({ id: routable.id, status: 'sent' });
    expect(outcomes[1]).toMatchObject({ id: unroutable.id, status: 'retryable' });
    expect((outcomes[1] as { error: string }).error).toMatch(/unroutable/);
    expect((await broker.drain(queue)).map((r) => r.properties.messageId)).toEqual([routable.id]);
  });

  it('holds back the messages to an exchange that does not exist, and sends the rest of their batch', async () => {
    const before = outboxMessages(5);
    const missing = uniqueName('missing');
    const toMissing = outboxMessage({ destination: missing, orderingKey: 'k' });
    const sameKeyAfter = outboxMessage({ orderingKey: 'k' });
    const after = outboxMessages(5);

    const outcomes = await publisher.publish([...before, toMissing, sameKeyAfter, ...after], neverAborted());

    const statusOf = new Map(outcomes.map((o) => [o.id, o.status]));
    expect(statusOf.get(toMissing.id)).toBe('retryable');
    expect(outcomes.find((o) => o.id === toMissing.id)).toMatchObject({
      error: expect.stringMatching(/does not exist/),
    });
    expect(statusOf.get(sameKeyAfter.id)).toBe('retryable'); // per-key order: not before its key's earlier message
    expect([...before, ...after].map((m) => statusOf.get(m.id))).toEqual(
      [...before, ...after].map(() => 'sent'),
    );
    const inQueue = (await broker.drain(queue)).map((r) => r.properties.messageId);
    expect(inQueue.sort()).toEqual([...before, ...after].map((m) => m.id).sort());
  });

  it('reports what a channel closed by the broker did not confirm as not sent, then publishes on a new channel', async () => {
    // An exchange the publisher has seen, deleted since: only the broker can tell, by closing the channel.
    const deleted = uniqueName('deleted');
    await broker.channel.assertExchange(deleted, 'topic', { durable: false });
    await publisher.publish([outboxMessage({ destination: deleted })], neverAborted());
    await broker.channel.deleteExchange(deleted);
    const before = outboxMessages(5);
    const missingExchange = outboxMessage({ destination: deleted });
    const after = outboxMessages(5);

    const outcomes = await publisher.publish([...before, missingExchange, ...after], neverAborted());

    const statusOf = new Map(outcomes.map((o) => [o.id, o.status]));
    expect(statusOf.get(missingExchange.id)).toBe('retryable');
    // Lost with the channel through no fault of theirs: released without spending an attempt.
    for (const m of after) expect(statusOf.get(m.id)).toBe('unavailable');
    const sentIds = outcomes.filter((o) => o.status === 'sent').map((o) => o.id);
    const inQueue = (await broker.drain(queue)).map((r) => r.properties.messageId);
    expect(inQueue).toEqual(expect.arrayContaining(sentIds));

    const retried = await publisher.publish(after, neverAborted());
    expect(retried.map((o) => o.status)).toEqual(after.map(() => 'sent'));
  });

  it('reports a message to an exchange that does not exist as not sent, keeps the connection and publishes on', async () => {
    await publisher.connect();
    const model = connection.current;
    const missingExchange = outboxMessage({ destination: uniqueName('missing') });

    const [failed] = await publisher.publish([missingExchange], neverAborted());

    expect(failed).toMatchObject({ id: missingExchange.id, status: 'retryable' });
    expect((failed as { error: string }).error).toMatch(/does not exist/);
    const next = outboxMessages(3);
    const outcomes = await publisher.publish(next, neverAborted());
    expect(outcomes).toEqual(next.map((m) => ({ id: m.id, status: 'sent' })));
    expect(connection.current).toBe(model);
    const inQueue = (await broker.drain(queue)).map((r) => r.properties.messageId);
    expect(inQueue.sort()).toEqual(next.map((m) => m.id).sort());
  });

  describe('when the broker does not confirm in time', () => {
    let proxy: HoldingProxy;
    let slowConnection: RabbitConnection;
    let slowPublisher: RabbitPublisher;

    beforeEach(async () => {
      proxy = await HoldingProxy.start(AMQP_URL);
      slowConnection = new RabbitConnection({
        url: proxy.urlFor(AMQP_URL),
        connectionName: uniqueName('publisher_held'),
        // No heartbeats: with confirms held back, only the confirm timeout may end the wait.
        heartbeatSeconds: 0,
        reconnectBackoff: { initialMs: 50, maxMs: 500 },
      });
      slowPublisher = new RabbitPublisher(slowConnection, {
        defaultDestination: exchange,
        confirmTimeoutMs: 500,
      });
    });

    afterEach(async () => {
      proxy.releaseDownstream();
      await slowPublisher.close();
      await slowConnection.close();
      await proxy.close();
    });

    it('reports the unconfirmed messages unavailable although the broker took them (no attempt spent on a broker that does not answer), ignores the late confirms and publishes on', async () => {
      const warmUp = outboxMessages(1);
      await waitFor('a first publish to be confirmed', async () => {
        const [outcome] = await slowPublisher.publish(warmUp, neverAborted());
        return outcome!.status === 'sent' ? true : undefined;
      });
      const model = slowConnection.current;
      await broker.drain(queue);

      proxy.holdDownstream();
      const unconfirmed = outboxMessages(3);
      const outcomes = await slowPublisher.publish(unconfirmed, neverAborted());

      expect(outcomes.map((o) => o.status)).toEqual(['unavailable', 'unavailable', 'unavailable']);
      for (const outcome of outcomes) expect((outcome as { error: string }).error).toMatch(/no confirm/);
      // The broker did route them: "not confirmed" means "send again", and the inbox absorbs the copy.
      await waitFor('the unconfirmed messages to reach the queue', async () =>
        (await broker.readyCount(queue)) === 3 ? true : undefined,
      );
      await waitFor('the confirms to be held back', () => (proxy.heldBytes > 0 ? true : undefined));

      proxy.releaseDownstream();
      const next = outboxMessages(2);
      const after = await waitFor('a publish after the confirms flow again', async () => {
        const result = await slowPublisher.publish(next, neverAborted());
        return result.every((o) => o.status === 'sent') ? result : undefined;
      });

      expect(after).toEqual(next.map((m) => ({ id: m.id, status: 'sent' })));
      expect(slowConnection.current).toBe(model);
      expect(proxy.accepted).toBe(1);
      const inQueue = (await broker.drain(queue)).map((r) => r.properties.messageId);
      expect(inQueue).toEqual(expect.arrayContaining([...unconfirmed, ...next].map((m) => m.id)));
    });
  });

  it('reports every message as retryable when the relay aborts before confirms arrive', async () => {
    const aborted = new AbortController();
    aborted.abort(new Error('lease lost'));
    const messages = outboxMessages(3);

    const outcomes = await publisher.publish(messages, aborted.signal);

    expect(outcomes.map((o) => o.status)).toEqual(['retryable', 'retryable', 'retryable']);
  });

  it('publishes again after its connection was closed from the broker side', async () => {
    await publisher.connect();
    await publisher.connect();
    expect(await publisher.publish(outboxMessages(2), neverAborted())).toHaveLength(2);
    const before = connection.current;
    expect(before).not.toBeNull();
    expect(await closeConnectionsNamed(connectionName)).toBe(1);
    // Dropped, or already replaced by a reconnect (a null in between can be missed between polls).
    await waitFor('the connection to drop', () => (connection.current !== before ? true : undefined));

    const messages = outboxMessages(3);
    const outcomes = await waitFor('a publish after reconnect', async () => {
      const result = await publisher.publish(messages, neverAborted());
      return result.every((o) => o.status === 'sent') ? result : undefined;
    });

    expect(outcomes).toHaveLength(3);
    const inQueue = (await broker.drain(queue)).map((r) => r.properties.messageId);
    expect(inQueue).toEqual(expect.arrayContaining(messages.map((m) => m.id)));
  });

  it('reports messages as unavailable once closed (the broker out of reach: no attempt spent)', async () => {
    await publisher.close();
    const outcomes = await publisher.publish(outboxMessages(1), neverAborted());
    expect(outcomes[0]).toMatchObject({ status: 'unavailable', error: 'publisher is closed' });
  });
});

describe('RabbitPublisher without a reachable broker', () => {
  it("reports every message 'unavailable' once it gave up waiting for a connection", async () => {
    const connection = new RabbitConnection({
      url: `amqp://guest:guest@127.0.0.1:${await closedPort()}`,
      reconnectBackoff: { initialMs: 50, maxMs: 200 },
    });
    const publisher = new RabbitPublisher(connection, {
      defaultDestination: 'anything',
      confirmTimeoutMs: 300,
    });
    try {
      const outcomes = await publisher.publish(outboxMessages(2), neverAborted());
      expect(outcomes.map((o) => o.status)).toEqual(['unavailable', 'unavailable']);
    } finally {
      await publisher.close();
      await connection.close();
    }
  });
});
