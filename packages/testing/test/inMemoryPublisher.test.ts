import type { OutboxMessage } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';

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
