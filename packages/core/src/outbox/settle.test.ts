import { describe, expect, it } from '@jest/globals';
import { settlesWithin } from './settle';

const timers = () => process.getActiveResourcesInfo().filter((type) => type === 'Timeout').length;

describe('settlesWithin', () => {
  it('answers true once the work settled, false after ms', async () => {
    expect(await settlesWithin(Promise.reject(new Error('failed')), 60_000)).toBe(true);
    expect(await settlesWithin(new Promise(() => undefined), 1)).toBe(false);
  });

  it('answers false at once when stop aborts, its timer cleared', async () => {
    const before = timers();
    const stop = new AbortController();
    const waiting = settlesWithin(new Promise(() => undefined), 600_000, stop.signal);
    expect(timers()).toBe(before + 1);
    stop.abort();
    expect(await waiting).toBe(false);
    expect(timers()).toBe(before);
    expect(await settlesWithin(new Promise(() => undefined), 600_000, stop.signal)).toBe(false);
    expect(timers()).toBe(before);
  });
});
