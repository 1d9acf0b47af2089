/**
 * Liveness across a step of the wall clock (NTP, an operator): a loop's age is a length of time.
 * On Date.now() alone a step back hid a stalled loop for the step's length (its last cycle read
 * as in the future), and a step forward reported a running loop dead until its next cycle (a
 * liveness probe then restarts a healthy process). Fake timers: Date and the monotonic clock
 * (performance.now) move together, and setSystemTime steps Date only, as NTP does.
 */
import { createHealth, type LoopSource } from '@ferry/core';
import { refusingExecutor } from '../../../../test-support/executors';

beforeEach(() => {
  jest.useFakeTimers();
});
afterEach(() => {
  jest.useRealTimers();
});

const HOUR = 3_600_000;

function loopSource(): { lastCycleAt: Date | null; state: string; pollIntervalMs: number } {
  return { lastCycleAt: new Date(), state: 'running', pollIntervalMs: 100 };
}

async function relayCheck(
  source: LoopSource,
  health = createHealth({ db: refusingExecutor, relay: source, maxCycleAgeMs: 1_000 }),
) {
  const report = await health.liveness();
  return { check: report.checks.find((c) => c.name === 'relay'), health };
}

it('a loop that stalls is down past its bound though the wall clock was stepped back an hour', async () => {
  const source = loopSource();
  const { check: first, health } = await relayCheck(source);
  expect(first?.status).toBe('up');
  jest.setSystemTime(Date.now() - HOUR);
  jest.advanceTimersByTime(5_000);
  const { check } = await relayCheck(source, health);
  expect(check?.status).toBe('down');
  expect(check?.detail).toMatch(/^last cycle 5\d{3} ms ago/);
});

it('a loop that runs stays up though the wall clock was stepped forward an hour', async () => {
  const source = loopSource();
  const { check: first, health } = await relayCheck(source);
  expect(first?.status).toBe('up');
  jest.setSystemTime(Date.now() + HOUR);
  jest.advanceTimersByTime(50);
  const { check } = await relayCheck(source, health);
  expect(check?.status).toBe('up');
});

it('a cycle after the step counts from its own time', async () => {
  const source = loopSource();
  const { health } = await relayCheck(source);
  jest.setSystemTime(Date.now() - HOUR);
  jest.advanceTimersByTime(5_000);
  source.lastCycleAt = new Date();
  jest.advanceTimersByTime(50);
  const { check } = await relayCheck(source, health);
  expect(check).toMatchObject({ status: 'up', detail: expect.stringMatching(/^last cycle \d{1,3} ms ago$/) });
});

it("an inbox worker's outage is down past its bound though the wall clock was stepped back an hour", async () => {
  const now = new Date();
  const inbox: { -readonly [K in keyof LoopSource]: LoopSource[K] } = {
    ...loopSource(),
    sessionOutage: { since: now, lastAt: now, lastError: 'pool exhausted', transactions: 3 },
    claimCycling: { since: now, lastAt: now, claims: 3 },
  };
  const health = createHealth({ db: refusingExecutor, inbox, maxCycleAgeMs: 1_000, checkSchema: false });
  const named = async () =>
    (await health.details()).checks.find((c) => c.name === 'inbox handler transactions');
  expect((await named())?.status).toBe('up');
  jest.setSystemTime(Date.now() - HOUR);
  jest.advanceTimersByTime(5_000);
  // Claims given back on, after the step (review 157: cycling lasts from the first give-back to the last).
  inbox.claimCycling = { since: now, lastAt: new Date(), claims: 4 };
  const check = await named();
  expect(check?.status).toBe('down');
  expect(check?.detail).toMatch(/no session for a handler transaction in 5\d{3} ms/);
  expect(check?.detail).toMatch(/no handler started, for 5\d{3} ms/);
});
