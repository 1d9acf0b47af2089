import type { OutboxMessage, PublishOutcome } from '../contracts';
import type { TransportPublisherEvent } from './events';
import { observePublish, PublishCalls } from './publishEvents';
import { testOutboxMessage } from '../../../../test-support/outboxMessages';

const message = (id: string, destination: string): OutboxMessage => testOutboxMessage({ id, destination });

describe('observePublish', () => {
  it('reports one published event per destination and one publish-failed per destination and outcome', async () => {
    const messages = [message('a', 'x'), message('b', 'x'), message('c', 'y'), message('d', 'y')];
    const outcomes: PublishOutcome[] = [
      { id: 'a', status: 'sent' },
      { id: 'b', status: 'sent' },
      { id: 'c', status: 'retryable', error: 'nack' },
      { id: 'd', status: 'permanent', error: 'too large' },
    ];
    const events: TransportPublisherEvent[] = [];
    const returned = await observePublish(
      { transport: 'memory', observer: (event) => events.push(event) },
      messages,
      (m) => m.destination ?? '',
      async () => outcomes,
    );
    expect(returned).toBe(outcomes);
    expect(events).toEqual([
      { type: 'published', transport: 'memory', destination: 'x', count: 2, durationMs: expect.any(Number) },
      {
        type: 'publish-failed',
        transport: 'memory',
        destination: 'y',
        count: 1,
        outcome: 'retryable',
        error: 'nack',
      },
      {
        type: 'publish-failed',
        transport: 'memory',
        destination: 'y',
        count: 1,
        outcome: 'permanent',
        error: 'too large',
      },
    ]);
  });

  it('returns the outcomes unchanged when the observer throws', async () => {
    const outcomes: PublishOutcome[] = [{ id: 'a', status: 'sent' }];
    const returned = await observePublish(
      {
        transport: 'memory',
        observer: () => {
          throw new Error('observer bug');
        },
      },
      [message('a', 'x')],
      () => 'x',
      async () => outcomes,
    );
    expect(returned).toBe(outcomes);
  });
});

describe('PublishCalls', () => {
  it('counts a call until it settled: settled() resolves after its observer was told', async () => {
    const calls = new PublishCalls();
    const order: string[] = [];
    let answer: (outcomes: readonly PublishOutcome[]) => void = () => undefined;
    const report = { transport: 'memory', observer: () => void order.push('observed'), calls };
    const call = observePublish(
      report,
      [message('a', 'x')],
      () => 'x',
      () => new Promise((resolve) => (answer = resolve)),
    );
    const settled = calls.settled(60_000).then((done) => void order.push(`settled ${String(done)}`));
    answer([{ id: 'a', status: 'retryable', error: 'closed' }]);
    await Promise.all([call, settled]);
    expect(order).toEqual(['observed', 'settled true']);
    // A rejected call settles too; nothing in flight: settled at once.
    await expect(
      observePublish(
        { ...report, observer: undefined },
        [],
        () => '',
        () => Promise.reject(new Error('down')),
      ),
    ).rejects.toThrow('down');
    expect(await calls.settled(60_000)).toBe(true);
  });

  it('gives up waiting after `ms` for a call that never settles', async () => {
    const calls = new PublishCalls();
    void observePublish(
      { transport: 'memory', observer: undefined, calls },
      [],
      () => '',
      () => new Promise(() => undefined),
    );
    expect(await calls.settled(10)).toBe(false);
  });
});
