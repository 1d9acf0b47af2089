import type { InboxAcceptInput, InboxAcceptResult } from '../contracts';
import { FerryError } from '../errors';
import { InboxAdmissionRejectedError } from '../inbox/errors';
import type { TransportConsumerEvent } from './events';
import { acceptHolding, type AnsweredInput, type HoldOptions } from './hold';

const input = (messageId: string): InboxAcceptInput => ({
  consumer: 'c',
  messageId,
  tenantId: null,
  payload: {},
});

/** Fails with `failure` for the first `outage` calls, then accepts (pure logic: a fake acceptor). */
function flaky(outage: number, failure: unknown) {
  let calls = 0;
  const acceptMany = (inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> => {
    calls += 1;
    if (calls <= outage) return Promise.reject(failure);
    return Promise.resolve(inputs.map((i) => ({ kind: 'accepted', id: i.messageId }) as const));
  };
  return { acceptMany, calls: () => calls };
}

/** Records what acceptHolding hands to `settle`, call by call. */
function settlements() {
  const calls: AnsweredInput[][] = [];
  const settle = (answered: readonly AnsweredInput[]): Promise<void> => {
    calls.push([...answered]);
    return Promise.resolve();
  };
  return { settle, calls };
}

const backoff = { initialMs: 1, maxMs: 2, multiplier: 2, jitter: 'none' } as const;
const who = { transport: 'test', source: 'q' } as const;

describe('acceptHolding', () => {
  it('holds and settles as usual when the logger it was handed throws on every line', async () => {
    const { acceptMany } = flaky(2, new FerryError('FERRY_DATABASE_UNAVAILABLE', 'down'));
    const fail = (): void => {
      throw new Error('the log destination is gone');
    };
    const options: HoldOptions = {
      backoff,
      signal: new AbortController().signal,
      ...who,
      logger: { debug: fail, info: fail, warn: fail, error: fail },
    };
    const settled = settlements();
    const held = await acceptHolding([input('a')], acceptMany, options, settled.settle);
    expect([held, settled.calls.length]).toEqual([{ kind: 'settled' }, 1]);
  });

  it('retries the same batch through a batch-wide outage and reports unavailable, then recovered', async () => {
    const { acceptMany, calls } = flaky(5, new FerryError('FERRY_DATABASE_UNAVAILABLE', 'down'));
    const events: TransportConsumerEvent[] = [];
    const options: HoldOptions = {
      backoff,
      signal: new AbortController().signal,
      ...who,
      observer: (event) => events.push(event),
    };
    const settled = settlements();
    const held = await acceptHolding([input('a'), input('b')], acceptMany, options, settled.settle);
    expect(held).toEqual({ kind: 'settled' });
    expect(settled.calls).toEqual([
      [
        { index: 0, result: { kind: 'accepted', id: 'a' } },
        { index: 1, result: { kind: 'accepted', id: 'b' } },
      ],
    ]);
    expect(calls()).toBe(6);
    const unavailable = events.filter((e) => e.type === 'acceptance-unavailable');
    expect(unavailable.map((e) => e.attempt)).toEqual([1, 2, 3, 4, 5]);
    expect(unavailable[0]).toEqual({
      type: 'acceptance-unavailable',
      transport: 'test',
      source: 'q',
      count: 2,
      attempt: 1,
      delayMs: 1,
      error: 'FERRY_DATABASE_UNAVAILABLE: down',
    });
    expect(events[events.length - 1]).toEqual({
      type: 'acceptance-recovered',
      transport: 'test',
      source: 'q',
      count: 2,
      failures: 5,
    });
  });

  it('goes on holding when the observer throws', async () => {
    const { acceptMany, calls } = flaky(2, new FerryError('FERRY_DATABASE_UNAVAILABLE', 'down'));
    const held = await acceptHolding(
      [input('a')],
      acceptMany,
      {
        backoff,
        signal: new AbortController().signal,
        ...who,
        observer: () => {
          throw new Error('observer bug');
        },
      },
      settlements().settle,
    );
    expect(held.kind).toBe('settled');
    expect(calls()).toBe(3);
  });

  it('releases the batch when the signal aborts during the outage, without a further call', async () => {
    const failure = new FerryError('FERRY_ADMISSION_REJECTED', 'full');
    const { acceptMany, calls } = flaky(Number.MAX_SAFE_INTEGER, failure);
    const closing = new AbortController();
    const held = acceptHolding(
      [input('a')],
      acceptMany,
      {
        backoff: { ...backoff, initialMs: 60_000, maxMs: 60_000 },
        signal: closing.signal,
        ...who,
        observer: () => closing.abort(new Error('closed')),
      },
      settlements().settle,
    );
    await expect(held).resolves.toEqual({ kind: 'released', error: failure, pending: [0] });
    expect(calls()).toBe(1);
  });

  it('returns a failure that is not batch-wide (the retriable safety net) to the transport', async () => {
    const failure = new FerryError('FERRY_DATABASE_ERROR', 'unknown cause');
    const { acceptMany, calls } = flaky(Number.MAX_SAFE_INTEGER, failure);
    const settled = settlements();
    await expect(
      acceptHolding(
        [input('a')],
        acceptMany,
        { backoff, signal: new AbortController().signal, ...who },
        settled.settle,
      ),
    ).resolves.toEqual({ kind: 'failed', error: failure, pending: [0], offered: [0], notOffered: [] });
    expect(calls()).toBe(1);
    expect(settled.calls).toEqual([]);
  });

  it("lets a throw of settle through: it is the transport's, not an acceptance failure to retry", async () => {
    const { acceptMany, calls } = flaky(0, null);
    const bug = new Error('ack failed');
    const held = acceptHolding(
      [input('a')],
      acceptMany,
      { backoff, signal: new AbortController().signal, ...who },
      () => Promise.reject(bug),
    );
    await expect(held).rejects.toBe(bug);
    expect(calls()).toBe(1);
  });

  it('at the admission limit settles the answered inputs at once and holds only the refused ones', async () => {
    const refused = { kind: 'refused', code: 'FERRY_ADMISSION_REJECTED', reason: 'full' } as const;
    const offered: string[][] = [];
    const acceptMany = (inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> => {
      offered.push(inputs.map((i) => i.messageId));
      if (offered.length === 1) {
        const results = [{ kind: 'duplicate', id: 'd' } as const, refused, refused];
        return Promise.reject(new InboxAdmissionRejectedError(1, results));
      }
      return Promise.resolve(inputs.map((i) => ({ kind: 'accepted', id: i.messageId }) as const));
    };
    const events: TransportConsumerEvent[] = [];
    const settled = settlements();
    const held = await acceptHolding(
      [input('d'), input('n1'), input('n2')],
      acceptMany,
      { backoff, signal: new AbortController().signal, ...who, observer: (e) => events.push(e) },
      settled.settle,
    );
    expect(held).toEqual({ kind: 'settled' });
    expect(offered).toEqual([
      ['d', 'n1', 'n2'],
      ['n1', 'n2'],
    ]);
    expect(settled.calls).toEqual([
      [{ index: 0, result: { kind: 'duplicate', id: 'd' } }],
      [
        { index: 1, result: { kind: 'accepted', id: 'n1' } },
        { index: 2, result: { kind: 'accepted', id: 'n2' } },
      ],
    ]);
    expect(events.map((e) => [e.type, 'count' in e ? e.count : null])).toEqual([
      ['acceptance-unavailable', 2],
      ['acceptance-recovered', 2],
    ]);
  });
});

describe('acceptHolding: a batch that times out by its size (failed first)', () => {
  /** Times out (retriable FERRY_TIMEOUT, as a statement past statementTimeoutMs) on more than `most` inputs. */
  function timesOutAbove(most: number) {
    const sizes: number[] = [];
    const acceptMany = (inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> => {
      sizes.push(inputs.length);
      if (inputs.length > most)
        return Promise.reject(new FerryError('FERRY_TIMEOUT', 'statement timed out', { retriable: true }));
      return Promise.resolve(inputs.map((i) => ({ kind: 'accepted', id: i.messageId }) as const));
    };
    return { acceptMany, sizes };
  }

  it('offers fewer inputs after each timeout, so a batch too big for the deadline still goes through', async () => {
    // Before: the same 8 inputs were offered again after every backoff, timing out for ever: the
    // consumer's deliveries (a Kafka partition, a RabbitMQ prefetch window) stalled for good.
    const { acceptMany, sizes } = timesOutAbove(2);
    const settled = settlements();
    const inputs = 'abcdefgh'.split('').map(input);
    const held = await acceptHolding(
      inputs,
      acceptMany,
      { backoff, signal: AbortSignal.timeout(5_000), ...who },
      settled.settle,
    );
    expect(held).toEqual({ kind: 'settled' });
    const answered = settled.calls.flat();
    expect(answered.map((a) => a.index).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(answered.every((a) => a.result.kind === 'accepted')).toBe(true);
    expect(sizes.slice(0, 3)).toEqual([8, 4, 2]);
  });

  it('probes a size that timed out only now and then: a few timeouts for a whole large batch', async () => {
    const { acceptMany, sizes } = timesOutAbove(5);
    const settled = settlements();
    const held = await acceptHolding(
      Array.from({ length: 200 }, (_, i) => input(`m${i}`)),
      acceptMany,
      { backoff, signal: AbortSignal.timeout(5_000), ...who },
      settled.settle,
    );
    expect(held).toEqual({ kind: 'settled' });
    expect(
      settled.calls
        .flat()
        .map((a) => a.index)
        .sort((a, b) => a - b),
    ).toEqual(Array.from({ length: 200 }, (_, i) => i));
    // 200, 100, 50, 25, 13, 7 time out on the way down; then one probe after 2, 4, 8, ... parts.
    const timedOut = sizes.filter((size) => size > 5).length;
    expect(timedOut).toBeLessThanOrEqual(12);
    expect(sizes.filter((size) => size <= 5).length).toBeLessThanOrEqual(60);
  });

  it('holds one input at a time through an outage of timeouts, and releases the rest unanswered', async () => {
    const { acceptMany, sizes } = timesOutAbove(0);
    const settled = settlements();
    const abort = new AbortController();
    const events: TransportConsumerEvent[] = [];
    const held = acceptHolding(
      'abcd'.split('').map(input),
      acceptMany,
      {
        backoff,
        signal: abort.signal,
        ...who,
        observer: (event) => {
          events.push(event);
          if (events.length === 6) abort.abort(new Error('closing'));
        },
      },
      settled.settle,
    );
    await expect(held).resolves.toMatchObject({ kind: 'released', pending: [0, 1, 2, 3] });
    expect(settled.calls).toEqual([]);
    expect(sizes.slice(0, 4)).toEqual([4, 2, 1, 1]);
    // Every attempt is reported with the deliveries still held, not the window offered.
    expect(events.map((e) => (e.type === 'acceptance-unavailable' ? e.count : -1))).toEqual([
      4, 4, 4, 4, 4, 4,
    ]);
  });
});

describe('acceptHolding: a failure after the window shrank (review 67)', () => {
  it('names the failed offer apart from the inputs not offered since', async () => {
    let calls = 0;
    const acceptMany = (inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> => {
      calls += 1;
      if (calls === 1)
        return Promise.reject(new FerryError('FERRY_TIMEOUT', 'statement timed out', { retriable: true }));
      if (inputs.some((i) => i.messageId.startsWith('bad')))
        return Promise.reject(new FerryError('FERRY_DATABASE_ERROR', 'bad fails'));
      return Promise.resolve(inputs.map((i) => ({ kind: 'accepted', id: i.messageId }) as const));
    };
    const settled = settlements();
    const held = await acceptHolding(
      ['bad1', 'bad2', 'good', 'y'].map(input),
      acceptMany,
      { backoff, signal: AbortSignal.timeout(5_000), ...who },
      settled.settle,
    );
    expect(held).toMatchObject({
      kind: 'failed',
      pending: [0, 1, 2, 3],
      offered: [0, 1],
      notOffered: [2, 3],
    });
    expect(settled.calls).toEqual([]);
  });
});
