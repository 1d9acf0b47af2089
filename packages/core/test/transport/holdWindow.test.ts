/**
 * Review 12 findings of acceptHolding's halving (hold.ts, merged in 58f4f61). Pure logic: a fake
 * acceptMany, as packages/core/src/transport/hold.test.ts does.
 */
import {
  FerryError,
  InboxAdmissionRejectedError,
  type InboxAcceptInput,
  type InboxAcceptResult,
} from '@ferry/core';
import { acceptHolding, type AnsweredInput, type TransportConsumerEvent } from '@ferry/core/transport';

const input = (messageId: string): InboxAcceptInput => ({
  consumer: 'c',
  messageId,
  tenantId: null,
  payload: {},
});
const inputs = (n: number): InboxAcceptInput[] => Array.from({ length: n }, (_, i) => input(`m${i}`));
const backoff = { initialMs: 1, maxMs: 2, multiplier: 2, jitter: 'none' } as const;
const who = { transport: 'test', source: 'q' } as const;
const accepted = (batch: readonly InboxAcceptInput[]): InboxAcceptResult[] =>
  batch.map((i) => ({ kind: 'accepted', id: i.messageId }) as const);

/** Fails every call (whatever its size) with `failure` for the first `outage` calls, then accepts. */
function outageOf(outage: number, failure: unknown) {
  const sizes: number[] = [];
  const acceptMany = (batch: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> => {
    sizes.push(batch.length);
    return sizes.length <= outage ? Promise.reject(failure) : Promise.resolve(accepted(batch));
  };
  return { acceptMany, sizes };
}

const noop = (): Promise<void> => Promise.resolve();

describe('Review finding (failed first): acceptHolding halving', () => {
  it('does not read "too many connections" (SQLSTATE 53300) as a batch too big: an outage keeps the batch whole', async () => {
    // sizeMayCause takes all of class 53; 53300 is the server refusing a connection, nothing to do
    // with the batch's size. A short connection-limit outage leaves the batch in single-row
    // transactions, multiplying the connections and commits a just-recovered server must take.
    const tooMany = new FerryError('FERRY_DATABASE_UNAVAILABLE', 'sorry, too many clients already', {
      retriable: true,
      details: { sqlState: '53300' },
    });
    const { acceptMany, sizes } = outageOf(4, tooMany);
    const held = await acceptHolding(
      inputs(16),
      acceptMany,
      { backoff, signal: new AbortController().signal, ...who },
      noop,
    );
    expect(held).toEqual({ kind: 'settled' });
    // Expected: as any outage, the same 16 offered until it ends, then once: [16, 16, 16, 16, 16].
    expect(sizes).toEqual([16, 16, 16, 16, 16]);
  });

  it('grows the window back once acceptance answers again after an outage of timeouts', async () => {
    // The docs (isolate.ts sizeMayCause): "An outage fails every size alike: then the inputs are
    // held one at a time until it ends." After it ended, the rest of the batch (up to the new
    // default prefetch, 250) still goes one acceptMany (one transaction) per delivery.
    const timeout = new FerryError('FERRY_TIMEOUT', 'statement timed out', { retriable: true });
    const { acceptMany, sizes } = outageOf(6, timeout);
    const n = 64;
    const held = await acceptHolding(
      inputs(n),
      acceptMany,
      { backoff, signal: new AbortController().signal, ...who },
      noop,
    );
    expect(held).toEqual({ kind: 'settled' });
    const afterRecovery = sizes.slice(6);
    // Expected: the window regrows (fewer calls than inputs); actual: 64 calls of 1 input each.
    expect(afterRecovery.length).toBeLessThan(n / 4);
  });

  it('stops offering the rest of a shrunk batch once its signal aborted (close(), a lost channel)', async () => {
    // hold.ts: the signal "ends the hold: the batch is released". After a part went through, the
    // loop `continue`s without looking at the signal: after close() (or the loss of the RabbitMQ
    // channel whose acks can no longer be sent) it goes on accepting the rest part by part, each as
    // slow as the database, and close() waits for all of them.
    const sizes: number[] = [];
    const acceptMany = (batch: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> => {
      sizes.push(batch.length);
      if (batch.length > 1)
        return Promise.reject(new FerryError('FERRY_TIMEOUT', 'statement timed out', { retriable: true }));
      return Promise.resolve(accepted(batch));
    };
    const closing = new AbortController();
    const settled: AnsweredInput[] = [];
    const held = await acceptHolding(
      inputs(8),
      acceptMany,
      { backoff, signal: closing.signal, ...who },
      (answered) => {
        settled.push(...answered);
        closing.abort(new Error('close()'));
        return Promise.resolve();
      },
    );
    // Expected: released with the 7 not yet offered; actual: all 8 accepted one by one after close().
    expect(held).toMatchObject({ kind: 'released', pending: [1, 2, 3, 4, 5, 6, 7] });
    expect(settled.map((a) => a.index)).toEqual([0]);
  });
  it('counts the refused inputs in acceptance-unavailable at the admission limit, not the ones never offered', async () => {
    // HoldOptions.observer: "at the admission limit `count` is the refused inputs still held".
    // After a timeout halved the window, a refusal of the 4 offered reports all 8 held.
    const refused = { kind: 'refused', code: 'FERRY_ADMISSION_REJECTED', reason: 'full' } as const;
    let calls = 0;
    const acceptMany = (batch: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> => {
      calls += 1;
      if (calls === 1)
        return Promise.reject(new FerryError('FERRY_TIMEOUT', 'statement timed out', { retriable: true }));
      if (calls === 2)
        return Promise.reject(
          new InboxAdmissionRejectedError(
            1,
            batch.map(() => refused),
          ),
        );
      return Promise.resolve(accepted(batch));
    };
    const events: TransportConsumerEvent[] = [];
    await acceptHolding(
      inputs(8),
      acceptMany,
      { backoff, signal: new AbortController().signal, ...who, observer: (e) => events.push(e) },
      noop,
    );
    const atLimit = events.filter((e) => e.type === 'acceptance-unavailable' && /ADMISSION/.test(e.error));
    // Expected: count 4 (the refused offered part); actual: 8.
    expect(atLimit.map((e) => (e.type === 'acceptance-unavailable' ? e.count : null))).toEqual([4]);
  });
});
