import { guardLogger, type Logger } from './logger';

test('a guarded logger passes each line on, called on the logger itself, and swallows what it throws', () => {
  const lines: unknown[][] = [];
  class Recording {
    readonly prefix = 'rec';
    debug(...args: unknown[]): void {
      lines.push([this.prefix, 'debug', ...args]);
    }
    info(...args: unknown[]): void {
      lines.push([this.prefix, 'info', ...args]);
    }
    warn(): void {
      throw new Error('destination gone');
    }
  }
  // `error` missing altogether: a hand-written adapter with a bug.
  const guarded = guardLogger(new Recording() as unknown as Logger);

  guarded.debug({ a: 1 }, 'one');
  guarded.info('two');
  expect(() => guarded.warn('three')).not.toThrow();
  expect(() => guarded.error({ b: 2 }, 'four')).not.toThrow();
  expect(lines).toEqual([
    ['rec', 'debug', { a: 1 }, 'one'],
    ['rec', 'info', 'two'],
  ]);
});

test('guarding a guarded logger returns it', () => {
  const guarded = guardLogger({ debug: () => {}, info: () => {}, warn: () => {}, error: () => {} });
  expect(guardLogger(guarded)).toBe(guarded);
});
