/** raceAbort and passed() against a deadline shared by several waits (pure logic, fake clock). */
import { deadlineIn, passed, raceAbort } from '../src/race';

const never = new Promise<void>(() => undefined);

beforeEach(() => {
  jest.useFakeTimers();
});

afterEach(() => {
  jest.useRealTimers();
});

describe('a deadline shared by the waits of one publish', () => {
  test('a wait that starts after part of the deadline was spent ends when the deadline comes, naming the whole budget', async () => {
    const deadline = deadlineIn(1_000);
    jest.advanceTimersByTime(600);
    let outcome: string | null = null;
    raceAbort(never, [], 'send', deadline).catch((error: Error) => (outcome = error.message));
    await jest.advanceTimersByTimeAsync(399);
    expect(outcome).toBeNull();
    await jest.advanceTimersByTimeAsync(1);
    expect(outcome).toBe('send not confirmed within 1000 ms');
  });

  test('has passed once its time has come', () => {
    const deadline = deadlineIn(1_000);
    jest.advanceTimersByTime(999);
    expect(passed(deadline)).toBe(false);
    jest.advanceTimersByTime(1);
    expect(passed(deadline)).toBe(true);
  });
});
