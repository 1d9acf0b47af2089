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

  it('a call that starts once calls.close() was called runs nothing and reports nothing: every message unavailable with the closed text', async () => {
    const events: TransportPublisherEvent[] = [];
    const calls = new PublishCalls();
    const report = {
      transport: 'memory',
      observer: (event: TransportPublisherEvent) => void events.push(event),
      calls,
    };
    let ran = 0;
    const publish = async (): Promise<PublishOutcome[]> => {
      ran += 1;
      return [{ id: 'a', status: 'unavailable', error: 'publisher is closed' }];
    };
    await observePublish(report, [message('a', 'x')], () => 'x', publish);
    calls.close('SQS publisher is closed');
    calls.close();
    const after = await observePublish(report, [message('b', 'x'), message('c', 'y')], () => 'x', publish);
    expect({ after, ran, events: events.length }).toEqual({
      after: [
        { id: 'b', status: 'unavailable', error: 'SQS publisher is closed' },
        { id: 'c', status: 'unavailable', error: 'SQS publisher is closed' },
      ],
      ran: 1,
      events: 1,
    });
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

describe('PublishCalls: review 147', () => {
  const noMessages: readonly OutboxMessage[] = [];

  it('a publish that throws synchronously rejects (no throw out of publish()) and is no longer counted', async () => {
    const calls = new PublishCalls();
    const logger = { warn: jest.fn(), error: jest.fn(), info: jest.fn(), debug: jest.fn() };
    for (const observer of [undefined, () => undefined]) {
      let call: Promise<unknown> | null = null;
      expect(() => {
        call = observePublish(
          { transport: 'memory', observer, calls },
          noMessages,
          () => '',
          () => {
            throw new Error('thrown at once');
          },
        );
      }).not.toThrow();
      await expect(call).rejects.toThrow('thrown at once');
    }
    // An observer that throws changes nothing of the answer, and the call is not left counted.
    const outcomes: readonly PublishOutcome[] = [{ id: 'a', status: 'sent' }];
    const throwing = () => {
      throw new Error('observer broke');
    };
    await expect(
      observePublish(
        { transport: 'memory', observer: throwing, logger, calls },
        [message('a', 'x')],
        () => 'x',
        async () => outcomes,
      ),
    ).resolves.toBe(outcomes);
    expect(await calls.settled(0)).toBe(true);
  });

  it('close() called from the observer of a call in flight does not wait for itself', async () => {
    const calls = new PublishCalls();
    let closed: Promise<boolean> | null = null;
    const observer = () => {
      closed ??= calls.settled(60_000);
    };
    await observePublish(
      { transport: 'memory', observer, calls },
      [message('a', 'x')],
      () => 'x',
      async () => [{ id: 'a', status: 'retryable', error: 'closed' }],
    );
    expect(await closed).toBe(true);
  });

  it('calls settling in any order, rejected or not: settled() true once the last one did, then at once', async () => {
    const calls = new PublishCalls();
    const answers: ((fail: boolean) => void)[] = [];
    const pending = Array.from({ length: 5 }, () =>
      observePublish(
        { transport: 'memory', observer: undefined, calls },
        noMessages,
        () => '',
        () =>
          new Promise<readonly PublishOutcome[]>((resolve, reject) =>
            answers.push((fail) => (fail ? reject(new Error('down')) : resolve([]))),
          ),
      ).catch(() => undefined),
    );
    const all = calls.settled(60_000);
    [3, 0, 4, 1, 2].forEach((index) => answers[index]!(index % 2 === 0));
    await Promise.all(pending);
    expect(await all).toBe(true);
    expect(await calls.settled(0)).toBe(true);
  });
});
