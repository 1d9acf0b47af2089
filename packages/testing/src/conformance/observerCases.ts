import { expect } from './jest';
import { timedCases } from './timeouts';
import type { TransportConsumerEvent, TransportPublisherEvent } from '@ferry/core/transport';
import { waitUntil } from './assertions';
import type { AttachedConsumer, TransportUnderTest } from './types';

/** What the observer cases need from the suite (read at run time, after beforeEach). */
export interface ObserverContext {
  readonly timeoutMs: number;
  /** The `transport` every event must carry. */
  readonly transportName: string;
  /** Whether the transport can dead-letter (features.deadLetter). */
  readonly deadLetter: boolean;
  transport(): TransportUnderTest;
  /** Events of the consumers attached in the current case, in order. */
  consumerEvents(): readonly TransportConsumerEvent[];
  /** Events of the current case's publisher, in order. */
  publisherEvents(): readonly TransportPublisherEvent[];
  attach(): Promise<void>;
  /** The consumers attached in the current case, in order. */
  readonly consumers: readonly AttachedConsumer[];
  publishAllSent(count: number): Promise<string[]>;
}

/** The summed `count` of the events of one type. */
function sum(events: readonly TransportConsumerEvent[], type: TransportConsumerEvent['type']): number {
  return events.reduce(
    (total, event) => total + (event.type === type && 'count' in event ? event.count : 0),
    0,
  );
}

/**
 * Every transport's consumer and publisher report to their `observer` in the one event shape of
 * @ferry/core/transport, with their transport's name and the queue / topic they read.
 */
export function registerObserverCases(context: ObserverContext): void {
  const it = timedCases(context.timeoutMs);
  it('reports received, then accepted and settled, for delivered messages, with its transport and source', async () => {
    await context.attach();
    const ids = await context.publishAllSent(5);
    const events = await waitUntil(
      'five accepted and settled reported',
      () => {
        const seen = context.consumerEvents();
        return sum(seen, 'accepted') >= ids.length && sum(seen, 'settled') >= ids.length ? seen : undefined;
      },
      context.timeoutMs,
    );
    const types = events.map((event) => event.type);
    expect(types.indexOf('received')).toBeGreaterThanOrEqual(0);
    expect(types.indexOf('received')).toBeLessThan(types.indexOf('accepted'));
    expect(types.indexOf('received')).toBeLessThan(types.indexOf('settled'));
    expect(sum(events, 'accepted')).toBe(ids.length);
    expect(sum(events, 'received')).toBeGreaterThanOrEqual(ids.length);
    // A delivery is settled once: more settled than received is an ack reported twice (review 90).
    expect(sum(events, 'settled')).toBeLessThanOrEqual(sum(events, 'received'));
    const { source } = context.transport();
    const strangers = events.filter(
      (event) => event.transport !== context.transportName || event.source !== source,
    );
    expect(strangers).toEqual([]);
    const published = context.publisherEvents();
    expect(published.every((event) => event.transport === context.transportName)).toBe(true);
    expect(
      published.reduce((total, event) => total + (event.type === 'published' ? event.count : 0), 0),
    ).toBe(ids.length);
  });

  it('reports each consumer connected with its own instance, and one disconnected (closed) when its close() ends it', async () => {
    const { source } = context.transport();
    const instances = () => [
      ...new Set(context.consumerEvents().flatMap((e) => (e.type === 'connected' ? [e.instance] : []))),
    ];
    const connection = (instance: string) =>
      context
        .consumerEvents()
        .filter((e) => (e.type === 'connected' || e.type === 'disconnected') && e.instance === instance);
    const closedOf = (instance: string) =>
      connection(instance).filter((e) => e.type === 'disconnected' && e.reason === 'closed');
    await context.attach();
    const [first] = await waitUntil(
      'the first consumer connected',
      () => (instances().length === 1 ? instances() : undefined),
      context.timeoutMs,
    );
    await context.attach();
    const second = await waitUntil(
      'the second consumer connected, with another instance',
      () => instances().find((instance) => instance !== first),
      context.timeoutMs,
    );
    const [a, b] = context.consumers.slice(-2);
    await a!.close();
    await a!.close();
    expect(closedOf(first!)).toEqual([
      {
        type: 'disconnected',
        transport: context.transportName,
        source,
        instance: first,
        reason: 'closed',
        error: expect.any(String),
        retryInMs: null,
      },
    ]);
    expect(closedOf(second)).toEqual([]);
    // The other consumer is still connected (a rebalance may have connected it again).
    await waitUntil(
      'the second consumer connected after the first closed',
      () => (connection(second).at(-1)?.type === 'connected' ? true : undefined),
      context.timeoutMs,
    );
    await b!.close();
    expect(closedOf(second)).toHaveLength(1);
    for (const instance of [first!, second])
      expect(connection(instance).at(-1)).toEqual(closedOf(instance)[0]);
  });

  if (context.deadLetter) {
    it('reports a poison delivery dead-lettered with its reason and id', async () => {
      await context.attach();
      await context.transport().publishRaw({ body: '{not json', messageId: 'conformance-poison' });
      const dead = await waitUntil(
        'a dead-lettered event',
        () => context.consumerEvents().find((event) => event.type === 'dead-lettered'),
        context.timeoutMs,
      );
      expect(dead).toEqual({
        type: 'dead-lettered',
        transport: context.transportName,
        source: context.transport().source,
        messageId: 'conformance-poison',
        reason: expect.stringMatching(/^[a-z_]+$/),
      });
      expect(sum(context.consumerEvents(), 'accepted')).toBe(0);
    });
  }
}
