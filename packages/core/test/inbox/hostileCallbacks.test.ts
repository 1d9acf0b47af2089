/**
 * The random source an application hands ferry (inbox `random`, every transport's `random`) is
 * called for retry and reconnect jitter. Whatever it does (throws anything, returns NaN, a
 * number outside [0, 1) such as -Infinity, a Promise), the delay is the policy's full ceiling:
 * finite, never NaN, and never the zero delay of a hot retry loop; and a failed handler's receipt
 * is scheduled for its retry with its error recorded, never left PROCESSING until its lease runs
 * out.
 */
import { backoffDelay } from '../../src/backoff';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, waitFor } from './helpers';

const HOSTILE_RANDOM: Record<string, () => number> = {
  nan: () => NaN,
  infinite: () => Infinity,
  'minus-infinite': () => -Infinity,
  negative: () => -3,
  'just-below-zero': () => -Number.MIN_VALUE,
  one: () => 1,
  'above-one': () => 7,
  promise: () => Promise.resolve(0.5) as unknown as number,
  'throws-error': () => {
    throw new Error('random broke');
  },
  'throws-string': () => {
    throw 'random broke';
  },
};

describe('backoffDelay with a hostile random source', () => {
  it.each(Object.entries(HOSTILE_RANDOM))('%s: the full ceiling, never 0 nor NaN', (_name, random) => {
    for (const attempt of [1, 3, 10]) {
      const delay = backoffDelay(
        attempt,
        { initialMs: 100, maxMs: 1_000, multiplier: 2, jitter: 'full' },
        random,
      );
      expect(delay).toBe(Math.min(1_000, 100 * 2 ** (attempt - 1)));
    }
  });

  it.each([0, -0, 0.5, 1 - Number.EPSILON])('a draw of %d, within [0, 1), is used as it is', (value) => {
    const policy = { initialMs: 1_000, maxMs: 1_000, multiplier: 2, jitter: 'full' } as const;
    expect(backoffDelay(1, policy, () => value)).toBe(Math.round(value * 1_000) + 0);
  });
});

describe('inbox worker with a hostile random source', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it.each(['nan', 'throws-error', 'promise'])(
    '%s: a failed handler is scheduled for a retry and completes on it',
    async (name) => {
      let calls = 0;
      const inbox = makeInbox(t.prisma, {
        handlers: {
          billing: async () => {
            calls += 1;
            if (calls === 1) throw new Error('first attempt fails');
          },
        },
        random: HOSTILE_RANDOM[name]!,
      });
      await inbox.initialize();
      const receipt = await inbox.accept({
        consumer: 'billing',
        messageId: `m-${name}`,
        tenantId: 't1',
        payload: { n: 1 },
      });
      const id = receipt.record.id;

      await inbox.runOnce();
      const [row] = await t.db.query<{ status: string; last_error: string | null }>(
        'SELECT status, last_error FROM ferry_inbox_receipts WHERE id = $1',
        [id],
      );
      expect(row).toMatchObject({
        status: 'RETRYABLE',
        last_error: expect.stringContaining('first attempt fails'),
      });
      await waitFor('completed on its retry', async () => {
        await inbox.runOnce();
        const rows = await t.db.query<{ status: string }>(
          'SELECT status FROM ferry_inbox_receipts WHERE id = $1',
          [id],
        );
        return rows[0]?.status === 'COMPLETED' ? true : undefined;
      });
      expect(calls).toBe(2);
    },
  );
});

describe('inbox worker with a hostile handler-context wrapper', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  const trapped = () =>
    new Proxy(
      {},
      {
        get() {
          throw new Error('trap');
        },
        getPrototypeOf() {
          throw new Error('trap');
        },
      },
    );
  const WRAPPERS: Record<string, () => Promise<void>> = {
    'throws a Proxy': () => Promise.reject(trapped()),
    'never settles': () => new Promise<void>(() => undefined),
    'returns a number': () => 42 as unknown as Promise<void>,
  };

  it.each(Object.keys(WRAPPERS))(
    'a wrapper that %s: the receipt is retried with its error recorded',
    async (name) => {
      let ran = 0;
      const inbox = makeInbox(t.prisma, {
        handlers: {
          [`w-${name.replace(/\W/g, '-')}`]: async () => {
            ran += 1;
          },
        },
        handlerContext: () => WRAPPERS[name]!(),
        worker: { transactionTimeoutMs: 1_000 },
      });
      await inbox.initialize();
      const consumer = `w-${name.replace(/\W/g, '-')}`;
      const { record } = await inbox.accept({ consumer, messageId: 'm', tenantId: 't1', payload: { n: 1 } });

      await waitFor('retryable', async () => {
        await inbox.runOnce();
        const rows = await t.db.query<{ status: string; last_error: string | null }>(
          'SELECT status, last_error FROM ferry_inbox_receipts WHERE id = $1',
          [record.id],
        );
        return rows[0]?.status === 'RETRYABLE' || rows[0]?.status === 'DEAD' ? rows[0] : undefined;
      });
      const [row] = await t.db.query<{ last_error: string | null }>(
        'SELECT last_error FROM ferry_inbox_receipts WHERE id = $1',
        [record.id],
      );
      expect(row?.last_error).toEqual(
        name === 'never settles' ? expect.stringContaining('FERRY_TIMEOUT') : expect.any(String),
      );
      expect(ran).toBe(0);
    },
  );

  it('a handler that never settles and ignores its signal: the lane is freed and the receipt retried with FERRY_TIMEOUT', async () => {
    const inbox = makeInbox(t.prisma, {
      handlers: { hung: () => new Promise<void>(() => undefined) },
      worker: { transactionTimeoutMs: 1_000 },
    });
    await inbox.initialize();
    const { record } = await inbox.accept({ consumer: 'hung', messageId: 'm', tenantId: 't1', payload: {} });

    // runOnce() returns: before, it waited for the handler for ever.
    await inbox.runOnce();
    const [row] = await t.db.query<{ status: string; last_error: string | null }>(
      'SELECT status, last_error FROM ferry_inbox_receipts WHERE id = $1',
      [record.id],
    );
    expect(row).toMatchObject({ status: 'RETRYABLE', last_error: expect.stringContaining('FERRY_TIMEOUT') });
  });
});
