/**
 * What the RabbitMQ consumer and publisher tell their observer: the transport event contract of
 * @ferry/core/transport, with `transport: 'rabbitmq'` and the work queue as `source`.
 */
import { FerryError } from '@ferry/core';
import type { TransportConsumerEvent, TransportPublisherEvent } from '@ferry/core/transport';
import { closeConnectionsNamed, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';
import { neverAborted, outboxMessages } from './support/messages';

describe('RabbitMQ observer events', () => {
  let events: TransportConsumerEvent[] = [];
  let published: TransportPublisherEvent[] = [];
  const f = useConsumerFixture(
    () => ({ observer: (event) => events.push(event) }),
    () => ({ observer: (event) => published.push(event) }),
  );

  beforeEach(() => {
    events = [];
    published = [];
  });

  const sum = (type: TransportConsumerEvent['type']) =>
    events.reduce((total, e) => total + (e.type === type && 'count' in e ? e.count : 0), 0);

  it('reports connected, then received, accepted and settled for delivered messages, all from the work queue', async () => {
    await f.attach();
    const messages = outboxMessages(5, { destination: `/${f.queue}` });
    await f.publisher.publish(messages, neverAborted());

    await waitFor('five accepted and settled', () =>
      sum('accepted') === 5 && sum('settled') === 5 ? true : undefined,
    );
    expect(events[0]).toEqual({
      type: 'connected',
      transport: 'rabbitmq',
      source: f.queue,
      instance: expect.any(String),
    });
    expect(sum('received')).toBe(5);
    const types = events.map((e) => e.type);
    expect(types.indexOf('received')).toBeLessThan(types.indexOf('accepted'));
    expect(types.indexOf('accepted')).toBeLessThan(types.indexOf('settled'));
    expect(events.every((e) => e.transport === 'rabbitmq' && e.source === f.queue)).toBe(true);
    expect(published).toEqual([
      {
        type: 'published',
        transport: 'rabbitmq',
        destination: f.queue,
        count: 5,
        durationMs: expect.any(Number),
      },
    ]);
  });

  it('reports a poison delivery dead-lettered with its reason and id, and counts it settled', async () => {
    await f.attach();
    f.broker.channel.sendToQueue(f.queue, Buffer.from('{not json'), {
      messageId: 'poison-1',
      contentType: 'application/json',
    });

    await waitFor('a dead letter reported', () =>
      events.some((e) => e.type === 'dead-lettered') && sum('settled') === 1 ? true : undefined,
    );
    expect(events.filter((e) => e.type === 'dead-lettered')).toEqual([
      {
        type: 'dead-lettered',
        transport: 'rabbitmq',
        source: f.queue,
        reason: 'unparseable_body',
        messageId: 'poison-1',
      },
    ]);
    expect(sum('accepted')).toBe(0);
  });

  it('reports acceptance unavailable through an outage, then recovered', async () => {
    await f.acceptor.refuse(true);
    await f.attach();
    await f.publisher.publish(outboxMessages(2, { destination: `/${f.queue}` }), neverAborted());
    await waitFor('two unavailable attempts', () =>
      events.filter((e) => e.type === 'acceptance-unavailable').length >= 2 ? true : undefined,
    );
    await f.acceptor.refuse(false);

    await waitFor('recovered and accepted', () =>
      events.some((e) => e.type === 'acceptance-recovered') && sum('accepted') === 2 ? true : undefined,
    );
    const first = events.find((e) => e.type === 'acceptance-unavailable');
    expect(first).toMatchObject({ transport: 'rabbitmq', source: f.queue, attempt: 1 });
    expect(first?.type === 'acceptance-unavailable' && first.error).toMatch(/^FERRY_/);
  });

  it('reports acceptance-failed with the retry delay when a batch goes round the retry tiers', async () => {
    let refusals = 1;
    await f.attach({
      inbox: {
        maxPayloadBytes: 4_096,
        acceptMany: (inputs) => {
          if (refusals-- > 0) return Promise.reject(new FerryError('FERRY_DATABASE_ERROR', 'cause unknown'));
          return f.acceptor.acceptMany(inputs);
        },
      },
    });
    await f.publisher.publish(outboxMessages(1, { destination: `/${f.queue}` }), neverAborted());

    await waitFor('accepted after one trip', () => (sum('accepted') === 1 ? true : undefined));
    expect(events.filter((e) => e.type === 'acceptance-failed')).toEqual([
      {
        type: 'acceptance-failed',
        transport: 'rabbitmq',
        source: f.queue,
        count: 1,
        error: 'FERRY_DATABASE_ERROR: cause unknown',
        delayMs: 100,
      },
    ]);
  });

  it('reports disconnected with the retry wait, then connected, when the broker closes the connection', async () => {
    await f.attach();
    events.length = 0;
    expect(await closeConnectionsNamed(f.connectionName)).toBe(1);

    await waitFor('connected again', () => (events.some((e) => e.type === 'connected') ? true : undefined));
    const disconnected = events.find((e) => e.type === 'disconnected');
    expect(disconnected).toMatchObject({ transport: 'rabbitmq', source: f.queue, retryInMs: 0 });
    expect(events.findIndex((e) => e.type === 'disconnected')).toBeLessThan(
      events.findIndex((e) => e.type === 'connected'),
    );
  });

  it('accounts for a mixed batch (new, duplicate, poison) and is not changed by an observer that throws, rejects or hangs', async () => {
    let calls = 0;
    const hostile = (event: TransportConsumerEvent): unknown => {
      events.push(event);
      calls += 1;
      if (calls % 3 === 0) throw new Error('observer threw');
      if (calls % 3 === 1) return Promise.reject(new Error('observer rejected'));
      return new Promise(() => undefined);
    };
    await f.attach({ observer: hostile });
    const messages = outboxMessages(4, { destination: `/${f.queue}` });
    await f.publisher.publish(messages, neverAborted());
    await waitFor('four accepted', () => (sum('accepted') === 4 ? true : undefined));
    await f.publisher.publish(messages.slice(0, 2), neverAborted());
    f.broker.channel.sendToQueue(f.queue, Buffer.from('{not json'), {
      messageId: 'poison-2',
      contentType: 'application/json',
    });

    await waitFor('seven settled', () => (sum('settled') === 7 ? true : undefined));
    expect(sum('received')).toBe(7);
    expect(sum('accepted') + events.filter((e) => e.type === 'dead-lettered').length).toBe(7);
    expect(events.every((e) => e.transport === 'rabbitmq' && e.source === f.queue)).toBe(true);
    expect((await f.acceptor.storedIds()).sort()).toEqual(messages.map((m) => m.id).sort());
    expect((await f.broker.channel.checkQueue(f.queue)).messageCount).toBe(0);
  });

  it('reports a message to an exchange that routes nowhere as publish-failed', async () => {
    const nowhere = `${f.queue}.nowhere`;
    await f.broker.channel.assertExchange(nowhere, 'fanout', { durable: false });
    try {
      await f.publisher.publish(outboxMessages(2, { destination: nowhere }), neverAborted());
    } finally {
      await f.broker.channel.deleteExchange(nowhere);
    }
    expect(published).toEqual([
      {
        type: 'publish-failed',
        transport: 'rabbitmq',
        destination: nowhere,
        count: 2,
        outcome: 'retryable',
        error: expect.stringContaining('unroutable'),
      },
    ]);
  });
});
