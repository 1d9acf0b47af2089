/**
 * Review 124: observePublish, the helper every publisher (ferry's and a third party's) wraps its
 * publish() in so that its observer (a metrics observer) sees how each call ended.
 *
 * Defects:
 * - a publish() that rejected was reported to nobody: no `publish-failed`, so a third party's
 *   transport failing every call showed no publish failure at all in
 *   transport_publish_failures_total, while the relay made every message of the call retryable;
 * - a message the answer gave no outcome for (the relay: retryable) was not reported either;
 * - building the events could throw (a third party's destinationName that throws, an answer that
 *   is not an array): observePublish then rejected AFTER the broker had taken the messages, so
 *   the relay made a batch the broker confirmed retryable and published it again.
 * Now the events say what the relay makes of the call (a rejection: every message `retryable`,
 * with the rejection's description), the rejection itself propagates unchanged, and nothing in
 * the observation changes what publish() answered.
 */
import { emit, type OutboxMessage, type PublishOutcome, type Publisher } from '@ferry/core';
import { createFerryMetrics } from '@ferry/core/metrics';
import { observePublish, type TransportPublisherEvent } from '@ferry/core/transport';
import { testOutboxMessage } from '../../../test-support/outboxMessages';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { relay, statusOf } from './outbox/helpers';

const message = (id: string, destination: string): OutboxMessage => testOutboxMessage({ id, destination });

describe('observePublish when publish() rejects (review 124)', () => {
  it('reports every message as publish-failed retryable, per destination, and rethrows the same error', async () => {
    const events: TransportPublisherEvent[] = [];
    const failure = new Error('socket hang up');
    const call = observePublish(
      { transport: 'third', observer: (event) => void events.push(event) },
      [message('a', 'x'), message('b', 'x'), message('c', 'y')],
      (m) => m.destination,
      () => Promise.reject(failure),
    );
    await expect(call).rejects.toBe(failure);
    expect(events).toEqual([
      {
        type: 'publish-failed',
        transport: 'third',
        destination: 'x',
        count: 2,
        outcome: 'retryable',
        error: 'publish failed: Error: socket hang up',
      },
      {
        type: 'publish-failed',
        transport: 'third',
        destination: 'y',
        count: 1,
        outcome: 'retryable',
        error: 'publish failed: Error: socket hang up',
      },
    ]);
  });

  it('reports a rejection that is no Error, and a throw before the first await, as one', async () => {
    const events: TransportPublisherEvent[] = [];
    const report = {
      transport: 'third',
      observer: (event: TransportPublisherEvent) => void events.push(event),
    };
    await expect(
      observePublish(
        report,
        [message('a', 'x')],
        () => 'x',
        () => Promise.reject('nope'),
      ),
    ).rejects.toBe('nope');
    const thrown = new TypeError('bad');
    await expect(
      observePublish(
        report,
        [message('b', 'x')],
        () => 'x',
        () => {
          throw thrown;
        },
      ),
    ).rejects.toBe(thrown);
    expect(events.map((e) => e.type === 'publish-failed' && [e.count, e.outcome, e.error])).toEqual([
      [1, 'retryable', 'publish failed: non-error thrown: nope'],
      [1, 'retryable', 'publish failed: TypeError: bad'],
    ]);
  });

  it('reports a message the answer has no outcome for as retryable', async () => {
    const events: TransportPublisherEvent[] = [];
    const outcomes: PublishOutcome[] = [{ id: 'a', status: 'sent' }];
    await observePublish(
      { transport: 'third', observer: (event) => void events.push(event) },
      [message('a', 'x'), message('b', 'x')],
      () => 'x',
      async () => outcomes,
    );
    expect(events).toEqual([
      expect.objectContaining({ type: 'published', destination: 'x', count: 1 }),
      expect.objectContaining({ type: 'publish-failed', destination: 'x', count: 1, outcome: 'retryable' }),
    ]);
  });

  it('returns what publish() answered whatever the observation meets: a throwing destinationOf, an answer no array', async () => {
    const outcomes: PublishOutcome[] = [{ id: 'a', status: 'sent' }];
    const events: TransportPublisherEvent[] = [];
    const report = {
      transport: 'third',
      observer: (event: TransportPublisherEvent) => void events.push(event),
    };
    const returned = await observePublish(
      report,
      [message('a', 'x')],
      () => {
        throw new Error('destinationName bug');
      },
      async () => outcomes,
    );
    expect(returned).toBe(outcomes);
    // The broker took it: reported sent, under no destination.
    expect(events).toEqual([expect.objectContaining({ type: 'published', destination: '', count: 1 })]);
    const garbage = { not: 'an array' } as unknown as readonly PublishOutcome[];
    await expect(
      observePublish(
        report,
        [message('b', 'x')],
        () => 'x',
        async () => garbage,
      ),
    ).resolves.toBe(garbage);
  });
});

describe('a third party publisher that rejects, relayed on PostgreSQL, counted by the metrics (review 124)', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it('the failure is counted, the row retryable with the rejection as its error', async () => {
    const metrics = createFerryMetrics();
    try {
      const publisher: Publisher = {
        publish: (messages) =>
          observePublish(
            { transport: 'third', observer: metrics.transport },
            messages,
            (m) => m.destination,
            () => Promise.reject(new Error('broker gone')),
          ),
      };
      const { id } = await emit(t.db, { type: 'r124.reject', payload: {}, destination: 'orders' });
      expect(await relay(t.db, publisher).runOnce()).toMatchObject({ claimed: 1 });
      expect(await statusOf(t.db, id)).toMatchObject({
        status: 'PENDING',
        retry_count: 1,
        last_error: 'publish failed: broker gone',
      });
      expect(await metrics.registry.metrics()).toContain(
        'ferry_transport_publish_failures_total{transport="third",destination="orders",outcome="retryable"} 1',
      );
    } finally {
      await metrics.close();
    }
  });

  it('a batch the broker confirmed stays sent when destinationName throws', async () => {
    const publisher: Publisher = {
      publish: (messages) =>
        observePublish(
          { transport: 'third', observer: () => undefined },
          messages,
          () => {
            throw new Error('destinationName bug');
          },
          async () => messages.map((m): PublishOutcome => ({ id: m.id, status: 'sent' })),
        ),
    };
    const { id } = await emit(t.db, { type: 'r124.sent', payload: {} });
    await relay(t.db, publisher).runOnce();
    expect(await statusOf(t.db, id)).toMatchObject({ status: 'SENT', retry_count: 0 });
  });
});
