import { failOnUnhandledRejections } from '../../../../test-support/lifecycle';
import pino from 'pino';
import { guardLogger, type Logger } from './logger';

failOnUnhandledRejections();

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

test('a guarded logger whose method returns a rejected promise (an async adapter) loses the line, not the process', async () => {
  const asyncWarn = async (): Promise<void> => {
    throw new Error('remote sink gone');
  };
  const guarded = guardLogger({ debug: () => {}, info: () => {}, warn: asyncWarn, error: () => {} });
  guarded.warn({ a: 1 }, 'lost');
  // Node reports an unhandled rejection once the microtask queue has drained.
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
});

test("a guarded pino keeps pino's behaviour: its `this`, a level changed later, a child's bindings", () => {
  const lines: Record<string, unknown>[] = [];
  const destination = {
    write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>),
  };
  const root = pino({ level: 'warn', base: null, timestamp: false }, destination);
  const guarded = guardLogger(root);
  guarded.info('dropped at warn');
  root.level = 'info';
  guarded.info({ n: 1 }, 'kept once the level is info');
  guardLogger(root.child({ component: 'relay' })).warn('from the child');
  expect(lines).toEqual([
    { level: 30, n: 1, msg: 'kept once the level is info' },
    { level: 40, component: 'relay', msg: 'from the child' },
  ]);
});
