import { FerryConfigError } from '../errors';
import { RENEWALS_IN_FLIGHT_AT_MOST, startLease, type LeaseLoss, type LeaseOptions } from './heartbeat';
import { checkLeaseTiming } from './timing';

const never = (): Promise<boolean> => new Promise<boolean>(() => undefined);

function lease(overrides: Partial<LeaseOptions> & Pick<LeaseOptions, 'renew'>) {
  const losses: Array<LeaseLoss & { at: number }> = [];
  const errors: unknown[] = [];
  const handle = startLease({
    durationMs: 1_000,
    intervalMs: 300,
    claimedAt: Date.now(),
    onLost: (loss) => losses.push({ ...loss, at: Date.now() }),
    onError: (error) => errors.push(error),
    now: () => Date.now(),
    ...overrides,
  });
  return { handle, losses, errors };
}

beforeEach(() => jest.useFakeTimers({ now: 0 }));
afterEach(() => jest.useRealTimers());

describe('lease kit', () => {
  it('keeps a lease whose renewals succeed, renewing once per interval', async () => {
    const renew = jest.fn(async () => true);
    const { handle, losses } = lease({ renew });
    await jest.advanceTimersByTimeAsync(10_000);
    expect(losses).toEqual([]);
    expect(renew).toHaveBeenCalledTimes(33);
    await handle.stop();
    await jest.advanceTimersByTimeAsync(10_000);
    expect(renew).toHaveBeenCalledTimes(33);
  });

  it('counts a lease whose renewal hangs forever as lost at duration - interval, and stops in bounded time', async () => {
    const renew = jest.fn(never);
    const { handle, losses, errors } = lease({ renew });
    await jest.advanceTimersByTimeAsync(699);
    expect(losses).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(losses).toEqual([expect.objectContaining({ reason: 'expired', at: 700 })]);
    expect(handle.signal.aborted).toBe(true);
    expect(errors.length).toBeGreaterThan(0);
    let stopped = false;
    void handle.stop().then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(300);
    expect(stopped).toBe(true);
    const calls = renew.mock.calls.length;
    await jest.advanceTimersByTimeAsync(5_000);
    expect(renew).toHaveBeenCalledTimes(calls);
  });

  it('counts a lease lost at duration - interval when that comes before the first renewal, without renewing', async () => {
    const renew = jest.fn(async () => true);
    const { handle, losses } = lease({ renew, durationMs: 1_000, intervalMs: 600 });
    await jest.advanceTimersByTimeAsync(399);
    expect(losses).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(losses).toEqual([expect.objectContaining({ reason: 'expired', at: 400 })]);
    expect(handle.signal.aborted).toBe(true);
    expect(renew).not.toHaveBeenCalled();
  });

  it('gives a signal read before the loss the abort, and one read after it born aborted', async () => {
    const early = lease({ renew: never });
    const signal = early.handle.signal;
    const late = lease({ renew: never });
    await jest.advanceTimersByTimeAsync(700);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toMatchObject({ code: 'FERRY_LEASE_LOST' });
    expect(late.handle.signal.aborted).toBe(true);
    expect(late.handle.signal.reason).toMatchObject({ code: 'FERRY_LEASE_LOST' });
    await Promise.all([early.handle.stop(), late.handle.stop()]);
  });

  it('counts a lease whose renewals fail at once (database unreachable) as lost at duration - interval', async () => {
    const renew = jest.fn(async (): Promise<boolean> => {
      throw new Error('ECONNREFUSED');
    });
    const { handle, losses, errors } = lease({ renew });
    await jest.advanceTimersByTimeAsync(699);
    expect(losses).toEqual([]);
    expect(errors).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(1);
    expect(losses).toEqual([expect.objectContaining({ reason: 'expired', at: 700 })]);
    expect(handle.signal.aborted).toBe(true);
  });

  it('leaves no timer behind when stopped during the first interval, and never renews', async () => {
    const renew = jest.fn(async () => true);
    const { handle, losses } = lease({ renew });
    await jest.advanceTimersByTimeAsync(299);
    await handle.stop();
    expect(jest.getTimerCount()).toBe(0);
    await jest.advanceTimersByTimeAsync(5_000);
    expect(renew).not.toHaveBeenCalled();
    expect(losses).toEqual([]);
    expect(handle.signal.aborted).toBe(false);
  });

  it('loses at once, without renewing, a lease whose claim was sent longer than duration - interval ago', async () => {
    const renew = jest.fn(async () => true);
    const { losses } = lease({ renew, claimedAt: -800 });
    await jest.advanceTimersByTimeAsync(0);
    expect(losses).toEqual([expect.objectContaining({ reason: 'expired', at: 0 })]);
    expect(renew).not.toHaveBeenCalled();
  });

  it('bounds the first renewal of an interval close to half the duration by the local expiry', async () => {
    const renew = jest.fn(never);
    const { losses } = lease({ renew, intervalMs: 499 });
    await jest.advanceTimersByTimeAsync(500);
    expect(renew).toHaveBeenCalledTimes(1);
    expect(losses).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(losses).toEqual([expect.objectContaining({ reason: 'expired', at: 501 })]);
  });

  it('aborts the signal of a renewal that missed its deadline', async () => {
    const signals: AbortSignal[] = [];
    const { handle } = lease({
      renew: (signal) => {
        signals.push(signal);
        return never();
      },
    });
    await jest.advanceTimersByTimeAsync(600);
    expect(signals[0]?.aborted).toBe(true);
    await handle.stop();
  });

  it('reports a takeover when a renewal finds the claim gone', async () => {
    const { losses, handle } = lease({ renew: async () => false });
    await jest.advanceTimersByTimeAsync(300);
    expect(losses).toEqual([expect.objectContaining({ reason: 'taken_over', at: 300 })]);
    await handle.stop();
  });

  it('loses the lease after `tolerance` consecutive failures, and a success resets the count', async () => {
    const results = [false, true, false, false];
    const { losses, handle } = lease({
      durationMs: 10_000,
      intervalMs: 100,
      tolerance: 2,
      renew: async () => {
        if (results.shift()) return true;
        throw new Error('database down');
      },
    });
    await jest.advanceTimersByTimeAsync(300);
    expect(losses).toEqual([]);
    await jest.advanceTimersByTimeAsync(100);
    expect(losses).toEqual([expect.objectContaining({ reason: 'renewal_failed', at: 400 })]);
    expect(losses[0]?.message).toContain('database down');
    await handle.stop();
  });

  it('measures expiry from when the last successful renewal was sent, not when it returned', async () => {
    let first = true;
    const { losses, handle } = lease({
      renew: () => {
        if (!first) return never();
        first = false;
        return new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 250));
      },
    });
    // Renewal sent at 300 returned at 550: the lease is proven from 300, lost at 300 + 700.
    await jest.advanceTimersByTimeAsync(999);
    expect(losses).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(losses).toEqual([expect.objectContaining({ reason: 'expired', at: 1_000 })]);
    await handle.stop();
  });
});

/**
 * Renewals that answer as `answer` says (a promise that never settles, or one settling later),
 * counted while they run: how many are unanswered now, and the most at once.
 */
function counted(answer: (call: number) => Promise<boolean>) {
  const state = { running: 0, most: 0, calls: 0 };
  const renew = (): Promise<boolean> => {
    state.calls += 1;
    state.running += 1;
    state.most = Math.max(state.most, state.running);
    return answer(state.calls).finally(() => (state.running -= 1));
  };
  return { state, renew };
}

const after = (ms: number, owned = true): Promise<boolean> =>
  new Promise<boolean>((resolve) => setTimeout(() => resolve(owned), ms));

describe('lease kit: renewals the database does not answer in time', () => {
  it('never has more than two renewals of one lease unanswered, and still loses the lease at its local expiry', async () => {
    const { state, renew } = counted(never);
    const { handle, losses, errors } = lease({ renew, durationMs: 10_000, intervalMs: 100 });
    await jest.advanceTimersByTimeAsync(9_899);
    expect(losses).toEqual([]);
    expect(state.most).toBe(RENEWALS_IN_FLIGHT_AT_MOST);
    expect(state.calls).toBe(RENEWALS_IN_FLIGHT_AT_MOST);
    // Every interval had one failure: the two sent missed their deadline, the later beats sent
    // nothing (each waited an interval for one of the two to end).
    expect(errors).toHaveLength(97);
    expect(errors.at(-1)).toMatchObject({
      code: 'FERRY_TIMEOUT',
      message: expect.stringContaining('unanswered'),
    });
    await jest.advanceTimersByTimeAsync(1);
    expect(losses).toEqual([expect.objectContaining({ reason: 'expired', at: 9_900 })]);
    await handle.stop();
  });

  it('keeps a lease whose renewals all answer late, with at most two unanswered at once', async () => {
    // Each renewal answers 250 ms after it was sent: every deadline (100 ms) is missed.
    const { state, renew } = counted(() => after(250));
    const { handle, losses } = lease({ renew, durationMs: 1_000, intervalMs: 100 });
    await jest.advanceTimersByTimeAsync(10_000);
    expect(losses).toEqual([]);
    expect(handle.check()).toBe(true);
    expect(handle.provenAt).toBeGreaterThan(9_000);
    expect(state.most).toBe(RENEWALS_IN_FLIGHT_AT_MOST);
    // A renewal sent when one ended may be within its deadline: stop() waits for it, at most that.
    const stopped = handle.stop();
    await jest.advanceTimersByTimeAsync(100);
    await stopped;
  });

  it('proves the lease from when an abandoned renewal was sent once it answers late', async () => {
    // Sent at 300, answered at 650 (its deadline was 600): the lease is proven from 300, lost at 1,000.
    const { renew } = counted((call) => (call === 1 ? after(350) : never()));
    const { handle, losses } = lease({ renew });
    await jest.advanceTimersByTimeAsync(649);
    expect(handle.provenAt).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(handle.provenAt).toBe(300);
    await jest.advanceTimersByTimeAsync(349);
    expect(losses).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(losses).toEqual([expect.objectContaining({ reason: 'expired', at: 1_000 })]);
  });

  it('loses the lease when an abandoned renewal answers late that the claim is gone', async () => {
    const { renew } = counted((call) => (call === 1 ? after(350, false) : never()));
    const { losses } = lease({ renew });
    await jest.advanceTimersByTimeAsync(650);
    expect(losses).toEqual([expect.objectContaining({ reason: 'taken_over', at: 650 })]);
  });

  it('keeps a lease whose first renewal hangs for ever (its connection silent) while the next ones answer', async () => {
    const { state, renew } = counted((call) => (call === 1 ? never() : Promise.resolve(true)));
    const { handle, losses, errors } = lease({ renew, tolerance: 3 });
    await jest.advanceTimersByTimeAsync(10_000);
    expect(losses).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(state.running).toBe(1);
    expect(state.calls).toBe(33);
    await handle.stop();
  });

  it('counts a beat that finds two renewals unanswered as a failed renewal towards the tolerance', async () => {
    const { state, renew } = counted(never);
    const { handle, losses, errors } = lease({ renew, durationMs: 10_000, intervalMs: 100, tolerance: 3 });
    // Sent at 100 and at 200, each missing its deadline (the second sent a millisecond late: a
    // timer of 0 ms is one of 1 ms); the beat after them finds both unanswered, and counts as the
    // third failure once neither ended within the interval a renewal sent then would have had.
    await jest.advanceTimersByTimeAsync(399);
    expect(losses).toEqual([]);
    await jest.advanceTimersByTimeAsync(10);
    expect(losses).toEqual([expect.objectContaining({ reason: 'renewal_failed' })]);
    expect(losses[0]?.message).toContain('still unanswered');
    expect(errors).toHaveLength(3);
    expect(state.calls).toBe(2);
    await handle.stop();
  });

  it('gives a beat that finds two renewals unanswered its interval: a stall the tolerance allowed before keeps the lease', async () => {
    // The database answers nothing from 100 to 350, then everything at once. Tolerance 3: the
    // renewals sent at 100 and 200 miss their deadlines (2 failures); the beat at 300 finds both
    // unanswered. Before the bound it sent a third, answered at 350 in time; the beat must not
    // count as a third failure at once, before the stall had the interval a renewal would get.
    const { state, renew } = counted(() => {
      const wait = Math.max(0, 350 - Date.now());
      return wait === 0 ? Promise.resolve(true) : after(wait);
    });
    const { handle, losses } = lease({ renew, durationMs: 1_000, intervalMs: 100, tolerance: 3 });
    await jest.advanceTimersByTimeAsync(2_000);
    expect(losses).toEqual([]);
    expect(handle.check()).toBe(true);
    expect(state.most).toBe(RENEWALS_IN_FLIGHT_AT_MOST);
    await handle.stop();
  });

  it('stops at once during a beat that waits for one of two unanswered renewals, leaving no timer', async () => {
    const { state, renew } = counted(never);
    const { handle, losses, errors } = lease({ renew, durationMs: 10_000, intervalMs: 100 });
    // Sent at 100 and 200; from 301 the beat waits for one of them.
    await jest.advanceTimersByTimeAsync(350);
    const failed = errors.length;
    await handle.stop();
    expect(jest.getTimerCount()).toBe(0);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(errors).toHaveLength(failed);
    expect(losses).toEqual([]);
    expect(state.calls).toBe(2);
  });

  it('stops once the fresh renewal meets its deadline, not waiting for an abandoned one, and ignores late answers', async () => {
    let answerFirst: ((owned: boolean) => void) | undefined;
    const { state, renew } = counted((call) =>
      call === 1 ? new Promise<boolean>((resolve) => (answerFirst = resolve)) : never(),
    );
    // Sent at 300, abandoned at 600; the next one, sent then, has one interval.
    const { handle, losses } = lease({ renew, durationMs: 2_000 });
    await jest.advanceTimersByTimeAsync(650);
    expect(state.calls).toBe(2);
    let stopped = false;
    void handle.stop().then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(249);
    expect(stopped).toBe(false);
    await jest.advanceTimersByTimeAsync(10);
    expect(stopped).toBe(true);
    answerFirst?.(false);
    await jest.advanceTimersByTimeAsync(5_000);
    expect(losses).toEqual([]);
    expect(handle.signal.aborted).toBe(false);
    expect(jest.getTimerCount()).toBe(0);
  });
});

describe('lease kit: prove (a statement other than its renewals found the claim held)', () => {
  it('proves the lease from a later send time, never an earlier one, and not once it is lost', async () => {
    const { handle, losses } = lease({ renew: never });
    // Lost at 700 unproven; proven from 200, at 900.
    handle.prove(200);
    handle.prove(100);
    expect(handle.provenAt).toBe(200);
    await jest.advanceTimersByTimeAsync(899);
    expect(losses).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(losses).toEqual([expect.objectContaining({ reason: 'expired', at: 900 })]);
    handle.prove(800);
    expect(handle.provenAt).toBe(200);
    expect(handle.check()).toBe(false);
    await handle.stop();
  });

  it('ignores a proof once stopped', async () => {
    const { handle } = lease({ renew: never });
    await jest.advanceTimersByTimeAsync(100);
    void handle.stop();
    handle.prove(100);
    expect(handle.provenAt).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
  });
});

describe('lease timing rule', () => {
  const duration = { name: 'lease.duration', value: 1_000, given: true };
  const interval = (value: number) => ({ name: 'lease.heartbeatInterval', value, given: true });
  const tolerance = (value: number) => ({ name: 'lease.tol', value, given: true });
  it('accepts interval x tolerance below the duration and rejects the rest, naming the option', () => {
    expect(() => checkLeaseTiming(duration, interval(300), tolerance(3))).not.toThrow();
    expect(() => checkLeaseTiming(duration, interval(300), tolerance(4))).toThrow(FerryConfigError);
    expect(() => checkLeaseTiming(duration, interval(300), tolerance(4))).toThrow('lease.tol');
    expect(() => checkLeaseTiming(duration, interval(500))).toThrow('lease.heartbeatInterval');
  });
});
