import { configErrorOf } from './optionTables';

/**
 * Review 142: an entry point that takes an options object, and the shapes of a valid options
 * object an application can hand over that ferry must survive: each refused with FerryConfigError
 * naming the option (never a raw TypeError or a trap's own error), or accepted as the plain
 * object would be, with each option read exactly once (a value checked on one read is never used
 * from another).
 */
export interface EntryPoint {
  readonly name: string;
  /** The entry point called with `options` (sync or async). */
  readonly call: (options: unknown) => unknown;
  /** A valid options object, made anew at each call. */
  readonly base: () => Record<string, unknown>;
  /** An option of `base` made hostile, and an invalid value of it. */
  readonly key: string;
  readonly bad: unknown;
  /** The option path of the whole object (`options`; `redact` for createRedactor). */
  readonly path?: string;
  /** Its options' prefix (`redact.`); default ''. */
  readonly prefix?: string;
  /** Option groups of `base` (objects) whose own options must be read once too. */
  readonly nested?: readonly string[];
  /** Says whether the entry point took the options, given what `call` returned; default: it did not throw. */
  readonly accepted?: (result: unknown) => unknown;
  /** Closes what an accepted call made; default: its close(), when it has one. */
  readonly dispose?: (made: unknown) => Promise<void>;
}

/** Calls `entry` with `options`, which it must accept (see EntryPoint.accepted), and disposes what it made. */
export async function runEntryPoint(entry: EntryPoint, options: unknown): Promise<void> {
  const result = entry.call(options);
  if (entry.accepted !== undefined) {
    await entry.accepted(result);
    return;
  }
  const made = await result;
  if (entry.dispose !== undefined) await entry.dispose(made);
  else await closeMade(made);
}

async function closeMade(made: unknown): Promise<void> {
  const close = (made as { close?: unknown } | null | undefined)?.close;
  if (typeof close === 'function') await (close as () => Promise<void>).call(made);
}

type Check = (entry: EntryPoint) => Promise<void>;

const exploded = (what: string) => (): never => {
  throw new Error(`${what} exploded`);
};

async function refusedNaming(entry: EntryPoint, options: unknown, option: string | RegExp): Promise<void> {
  const error = await configErrorOf(() => entry.call(options));
  expect(error.code).toBe('FERRY_CONFIG_INVALID');
  if (typeof option === 'string') expect(error.option).toBe(option);
  else expect(error.option).toMatch(option);
}

/** `base` whose own options (and its `nested` groups' options) count their reads in `reads`. */
function counted(
  entry: EntryPoint,
  base: Record<string, unknown>,
  reads: Map<string, number>,
  flip: { readonly key: string; readonly bad: unknown },
): Record<string, unknown> {
  const count = (target: Record<string, unknown>, path: string) =>
    new Proxy(target, {
      get(object, key, receiver) {
        if (typeof key === 'string' && Object.hasOwn(object, key)) {
          const name = `${path}${key}`;
          const seen = (reads.get(name) ?? 0) + 1;
          reads.set(name, seen);
          // The option flips to an invalid value after its first read.
          if (name === flip.key && seen > 1) return flip.bad;
        }
        return Reflect.get(object, key, receiver) as unknown;
      },
    });
  const options = { ...base };
  for (const group of entry.nested ?? []) {
    const value = options[group];
    if (typeof value === 'object' && value !== null) {
      options[group] = count(value as Record<string, unknown>, `${group}.`);
    }
  }
  return count(options, '');
}

function deepFreeze<T>(value: T, nested: readonly string[]): T {
  for (const group of nested) {
    const member = (value as Record<string, unknown>)[group];
    if (typeof member === 'object' && member !== null) Object.freeze(member);
  }
  return Object.freeze(value);
}

/** The hostile shapes, as [title, check]: `refused: ...` must throw FerryConfigError, `accepted: ...` must work. */
export function hostileShapes(entry: EntryPoint): [string, Check][] {
  const path = entry.path ?? 'options';
  const prefix = entry.prefix ?? '';
  const option = `${prefix}${entry.key}`;
  const without = (): Record<string, unknown> => {
    const { [entry.key]: _left, ...rest } = entry.base();
    return rest;
  };
  const inheriting = (value: unknown): object => {
    class Inherited {}
    Object.defineProperty(Inherited.prototype, entry.key, { get: () => value, enumerable: false });
    return Object.assign(new Inherited(), without());
  };
  return [
    [
      `refused: a getter of ${entry.key} that throws`,
      async (e) => {
        const options = entry.base();
        Object.defineProperty(options, e.key, { get: exploded('getter'), enumerable: true });
        await refusedNaming(e, options, option);
      },
    ],
    [
      'refused: a Proxy whose ownKeys trap throws',
      async (e) => refusedNaming(e, new Proxy(e.base(), { ownKeys: exploded('trap') }), path),
    ],
    [
      'refused: a Proxy whose getOwnPropertyDescriptor trap throws',
      async (e) =>
        refusedNaming(e, new Proxy(e.base(), { getOwnPropertyDescriptor: exploded('trap') }), path),
    ],
    [
      'refused: a Proxy whose get trap throws',
      async (e) =>
        refusedNaming(e, new Proxy(e.base(), { get: exploded('trap') }), new RegExp(`^${prefix}\\w+$`)),
    ],
    [
      'refused: a revoked Proxy',
      async (e) => {
        const { proxy, revoke } = Proxy.revocable(e.base(), {});
        revoke();
        await refusedNaming(e, proxy, path);
      },
    ],
    [
      `refused: a class instance inheriting an invalid ${entry.key}`,
      async (e) => refusedNaming(e, inheriting(e.bad), option),
    ],
    [
      `accepted: a class instance inheriting a valid ${entry.key}`,
      async (e) => runEntryPoint(e, inheriting(e.base()[e.key])),
    ],
    [
      'accepted: an object with a null prototype',
      async (e) => runEntryPoint(e, Object.assign(Object.create(null) as object, e.base())),
    ],
    ['accepted: a frozen object', async (e) => runEntryPoint(e, deepFreeze(e.base(), e.nested ?? []))],
    ['accepted: a sealed object', async (e) => runEntryPoint(e, Object.seal(e.base()))],
    [
      `accepted: each option read once, ${entry.key} flipping to an invalid value after its first read`,
      async (e) => {
        const reads = new Map<string, number>();
        await runEntryPoint(e, counted(e, e.base(), reads, { key: e.key, bad: e.bad }));
        const reread = [...reads].filter(([, n]) => n > 1).map(([name, n]) => `${name} (${n} reads)`);
        expect(reread).toEqual([]);
      },
    ],
  ];
}

/** One describe per entry point, one test per hostile shape. */
export function describeHostileShapes(entries: readonly EntryPoint[]): void {
  describe.each(entries)('$name', (entry) => {
    test.each(hostileShapes(entry))('%s', async (_what, check) => {
      await check(entry);
    });
  });
}

/**
 * A transport's acceptor whose handlers take consumer `c` only: `asked` lists every consumer name
 * it was asked about (assertHandles), for a check that the name checked is the one consumed.
 */
export function recordingAcceptor(): {
  readonly acceptor: {
    readonly maxPayloadBytes: number;
    acceptMany(): Promise<[]>;
    assertHandles(consumer: string): void;
  };
  readonly asked: string[];
} {
  const asked: string[] = [];
  return {
    asked,
    acceptor: {
      maxPayloadBytes: 1024,
      acceptMany: async () => [],
      assertHandles: (consumer) => void asked.push(consumer),
    },
  };
}
