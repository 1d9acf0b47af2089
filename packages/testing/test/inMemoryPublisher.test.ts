import type { OutboxMessage, PublishOutcome } from '@ferry/core';
import type { TransportPublisherEvent } from '@ferry/core/transport';
import { InMemoryBroker, InMemoryPublisher, waitUntil, type PublishDecision } from '@ferry/testing';
import { expectNothingSpent, runRelayOnClosedPublisher } from '../../../test-support/closedPublisherRelay';

function message(id: string): OutboxMessage {
  return {
    id,
    type: 't',
    payload: {},
    destination: null,
    orderingKey: null,
    tenantId: null,
    correlationId: null,
    causationId: null,
    headers: {},
    traceparent: null,
    tracestate: null,
    attempt: 1,
    createdAt: new Date(),
  };
}

describe('InMemoryPublisher', () => {
  it('reports sent by default and records deliveries', async () => {
    const publisher = new InMemoryPublisher();
    const outcomes = await publisher.publish([message('a'), message('b')], new AbortController().signal);
    expect(outcomes).toEqual([
      { id: 'a', status: 'sent' },
      { id: 'b', status: 'sent' },
    ]);
    expect([...publisher.deliveryCounts()]).toEqual([
      ['a', 1],
      ['b', 1],
    ]);
  });

  it('reports the decided retryable and permanent outcomes and does not count them delivered', async () => {
    const publisher = new InMemoryPublisher({
      decide: (m) => (m.id === 'a' ? { retryable: 'busy' } : { permanent: 'bad' }),
    });
    const outcomes = await publisher.publish([message('a'), message('b')], new AbortController().signal);
    expect(outcomes).toEqual([
      { id: 'a', status: 'retryable', error: 'busy' },
      { id: 'b', status: 'permanent', error: 'bad' },
    ]);
    expect(publisher.delivered).toHaveLength(0);
    expect(publisher.attempts).toHaveLength(2);
  });

  it('leaves messages unreported once the signal aborted', async () => {
    const publisher = new InMemoryPublisher();
    const abort = new AbortController();
    abort.abort();
    expect(await publisher.publish([message('a')], abort.signal)).toEqual([]);
  });
});

/** `message(id)` with an ordering key. */
function keyed(id: string, orderingKey: string | null): OutboxMessage {
  return { ...message(id), orderingKey };
}

/** Lets every callback already due run (a late decision's, say) before the test looks. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('InMemoryPublisher: per-message outcomes, key order, abort and close, as the real publishers', () => {
  it('once a message of a key is not sent, its later messages in the call are not decided nor sent, reported as it was (custom decide)', async () => {
    const decisions: Record<string, PublishDecision> = {
      a1: { retryable: 'busy' },
      b1: { unavailable: 'down' },
      c1: { permanent: 'bad' },
    };
    const publisher = new InMemoryPublisher({ decide: (m) => decisions[m.id] ?? 'sent' });
    const messages = [
      keyed('a1', 'a'),
      keyed('b1', 'b'),
      keyed('c1', 'c'),
      keyed('a2', 'a'),
      keyed('b2', 'b'),
      keyed('c2', 'c'),
      keyed('n', null),
      keyed('x', 'x'),
    ];
    const earlier = (key: string) => `an earlier message of ordering key ${key} was not sent`;
    expect(await publisher.publish(messages, new AbortController().signal)).toEqual([
      { id: 'a1', status: 'retryable', error: 'busy' },
      { id: 'b1', status: 'unavailable', error: 'down' },
      { id: 'c1', status: 'permanent', error: 'bad' },
      { id: 'a2', status: 'retryable', error: earlier('a') },
      { id: 'b2', status: 'unavailable', error: earlier('b') },
      { id: 'c2', status: 'retryable', error: earlier('c') },
      { id: 'n', status: 'sent' },
      { id: 'x', status: 'sent' },
    ]);
    expect(publisher.attempts.map((m) => m.id)).toEqual(['a1', 'b1', 'c1', 'n', 'x']);
    expect(publisher.delivered.map((m) => m.id)).toEqual(['n', 'x']);
  });

  it('a decide that throws or rejects costs its message alone (retryable, naming the error), never the call', async () => {
    const publisher = new InMemoryPublisher({
      decide: (m) => {
        if (m.id === 'throws') throw new Error('a bug in the test');
        if (m.id === 'rejects') return Promise.reject(new Error('an async bug'));
        return 'sent';
      },
    });
    const outcomes = await publisher.publish(
      [
        keyed('before', null),
        keyed('throws', 'k'),
        keyed('behind', 'k'),
        keyed('rejects', null),
        keyed('after', null),
      ],
      new AbortController().signal,
    );
    expect(outcomes).toEqual([
      { id: 'before', status: 'sent' },
      { id: 'throws', status: 'retryable', error: expect.stringContaining('a bug in the test') },
      { id: 'behind', status: 'retryable', error: 'an earlier message of ordering key k was not sent' },
      { id: 'rejects', status: 'retryable', error: expect.stringContaining('an async bug') },
      { id: 'after', status: 'sent' },
    ]);
  });

  it('a decision still pending when the signal aborts is abandoned: the call resolves, a late decision is not recorded', async () => {
    let decideNow: ((decision: PublishDecision) => void) | undefined;
    const publisher = new InMemoryPublisher({
      decide: () => new Promise<PublishDecision>((resolve) => (decideNow = resolve)),
    });
    const abort = new AbortController();
    let outcomes: readonly PublishOutcome[] | undefined;
    void publisher.publish([message('a'), message('b')], abort.signal).then((answer) => (outcomes = answer));
    await waitUntil('the first decision asked', () => publisher.attempts.length === 1, { timeoutMs: 10_000 });
    abort.abort();
    await waitUntil('the call resolved', () => outcomes, { timeoutMs: 10_000 });
    decideNow?.('sent');
    await settle();
    expect({ outcomes, delivered: publisher.delivered }).toEqual({ outcomes: [], delivered: [] });
  });

  it('close() ends a call whose decision is pending: the rest is unavailable "publisher is closed" (no attempt spent), nothing is recorded sent after it', async () => {
    let decideNow: ((decision: PublishDecision) => void) | undefined;
    const events: TransportPublisherEvent[] = [];
    const publisher = new InMemoryPublisher({
      decide: (m) =>
        m.id === 'a' ? 'sent' : new Promise<PublishDecision>((resolve) => (decideNow = resolve)),
      observer: (event) => void events.push(event),
    });
    const publishing = publisher.publish(
      [message('a'), message('b'), message('c')],
      new AbortController().signal,
    );
    await waitUntil('the second decision asked', () => publisher.attempts.length === 2, {
      timeoutMs: 10_000,
    });
    let answered = false;
    void publishing.then(() => (answered = true));
    let closed = false;
    let answeredAtClose = false;
    void publisher.close().then(() => {
      closed = true;
      answeredAtClose = answered;
    });
    await waitUntil('close() resolved', () => closed, { timeoutMs: 10_000 });
    decideNow?.('sent');
    await settle();
    expect(answeredAtClose).toBe(true); // close() resolves once the call in flight ended
    expect(await publishing).toEqual([
      { id: 'a', status: 'sent' },
      { id: 'b', status: 'unavailable', error: 'publisher is closed' },
      { id: 'c', status: 'unavailable', error: 'publisher is closed' },
    ]);
    expect(publisher.delivered.map((m) => m.id)).toEqual(['a']);
    // The observer (and the metrics fed from it) hear the outcome the relay makes of it.
    expect(events).toEqual([
      expect.objectContaining({ type: 'published', count: 1 }),
      expect.objectContaining({
        type: 'publish-failed',
        count: 2,
        outcome: 'unavailable',
        error: 'publisher is closed',
      }),
    ]);
  });

  // Observed on main: a publish-failed (unavailable, "publisher is closed") per call after close()
  // resolved, to an observer its owner had shut down (review 148).
  it('a publish after close() is unavailable "publisher is closed", decides nothing and tells the observer nothing', async () => {
    const events: TransportPublisherEvent[] = [];
    const publisher = new InMemoryPublisher({ observer: (event) => void events.push(event) });
    await publisher.publish([message('a')], new AbortController().signal);
    await publisher.close();
    const atClose = events.length;
    const after = await publisher.publish([message('b'), message('c')], new AbortController().signal);
    expect(after).toEqual([
      { id: 'b', status: 'unavailable', error: 'publisher is closed' },
      { id: 'c', status: 'unavailable', error: 'publisher is closed' },
    ]);
    expect({ atClose, after: events.slice(atClose), attempts: publisher.attempts.map((m) => m.id) }).toEqual({
      atClose: 1,
      after: [],
      attempts: ['a'],
    });
  });

  it('attempts is a copy of the record too: changing what it returns changes no later read', async () => {
    const publisher = new InMemoryPublisher();
    await publisher.publish([message('a'), message('b')], new AbortController().signal);
    publisher.attempts.splice(0);
    publisher.delivered.splice(0);
    expect({
      attempts: publisher.attempts.map((m) => m.id),
      delivered: publisher.delivered.map((m) => m.id),
    }).toEqual({ attempts: ['a', 'b'], delivered: ['a', 'b'] });
  });

  it('close() during a call of synchronous decisions: the rest is "publisher is closed" and never reaches the queue', async () => {
    const broker = new InMemoryBroker();
    broker.declareQueue('q');
    const publisher = broker.publisher();
    const messages = ['a', 'b', 'c'].map((id) => ({ ...message(id), destination: 'q' }));
    const publishing = publisher.publish(messages, new AbortController().signal);
    await publisher.close();
    const outcomes = await publishing;
    const sent = outcomes.filter((outcome) => outcome.status === 'sent').length;
    expect(sent).toBeLessThan(messages.length);
    expect(outcomes.slice(sent)).toEqual(
      messages.slice(sent).map(({ id }) => ({ id, status: 'unavailable', error: 'publisher is closed' })),
    );
    expect(broker.held('q')).toBe(sent);
  });
});

// Observed on main: the events in flight at close() and every later cycle's batches answered
// retryable ("publisher is closed"): retry_count 1, then FAILED after maxRetries cycles.
it('InMemoryPublisher closed under a running relay: every event not delivered stays PENDING with no attempt spent, cycle after cycle; only what it delivered is SENT', async () => {
  // Each decision a turn of the event loop away: the relay's batches are in flight at close().
  const publisher = new InMemoryPublisher({
    decide: () => new Promise<PublishDecision>((resolve) => setImmediate(() => resolve('sent'))),
  });
  const run = await runRelayOnClosedPublisher({
    publisher,
    destination: 'orders',
    taken: async () => publisher.delivered.map((m) => m.id),
  });
  expectNothingSpent(run);
});
