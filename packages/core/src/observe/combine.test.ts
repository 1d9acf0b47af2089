import { combineObservers } from './combine';
import { safeEmit } from './safeEmit';

describe('combineObservers', () => {
  it('hands every event to each observer in order, skipping undefined ones', () => {
    const seen: string[] = [];
    const combined = combineObservers<{ type: string }>(
      (e) => void seen.push(`a:${e.type}`),
      undefined,
      (e) => void seen.push(`b:${e.type}`),
    );
    combined({ type: 'x' });
    combined({ type: 'y' });
    expect(seen).toEqual(['a:x', 'b:x', 'a:y', 'b:y']);
  });

  it('still calls the later observers when one throws, then throws its error (safeEmit logs it)', () => {
    const seen: string[] = [];
    const boom = new Error('boom');
    const combined = combineObservers<string>(
      () => {
        throw boom;
      },
      (e) => void seen.push(e),
    );
    expect(() => combined('x')).toThrow(boom);
    expect(seen).toEqual(['x']);
    const warned: unknown[] = [];
    const logger = {
      debug() {},
      info() {},
      error() {},
      warn: (fields: object | string) => void warned.push(fields),
    };
    safeEmit(combined, 'y', logger);
    expect(seen).toEqual(['x', 'y']);
    expect(warned).toEqual([{ err: boom }]);
  });

  it('waits for asynchronous observers and rejects with the first failure', async () => {
    const seen: string[] = [];
    const combined = combineObservers<string>(
      async (e) => {
        seen.push(`async:${e}`);
        throw new Error('rejected');
      },
      (e) => void seen.push(`sync:${e}`),
    );
    await expect(combined('x')).rejects.toThrow('rejected');
    expect(seen).toEqual(['async:x', 'sync:x']);
    const fine = combineObservers<string>(async () => undefined);
    await expect(fine('y')).resolves.toBeUndefined();
  });
});
