import { describe, expect, it } from '@jest/globals';
import { heldBy } from '../../../../test-support/deadlines';
import { isFerryError } from '../errors';
import type { SqlExecutor, StatementOptions, TransactionOptions } from './executor';
import { statementTimeoutOption, withDeadlines, withStatementDeadline } from './statementDeadline';

/** An executor whose statements never answer (or answer `rows`), recording each statement's signal. */
function fakeExecutor(rows?: unknown[]): { db: SqlExecutor; signals: AbortSignal[] } {
  const signals: AbortSignal[] = [];
  const answer = <T>(options?: StatementOptions): Promise<T> => {
    if (options?.signal) signals.push(options.signal);
    return rows === undefined ? new Promise<T>(() => undefined) : Promise.resolve(rows as T);
  };
  const db: SqlExecutor = {
    inTransaction: false,
    query: <T>(_text: string, _values?: readonly unknown[], options?: StatementOptions) =>
      answer<T[]>(options),
    execute: (_text, _values, options) => answer<number>(options),
    transaction: (work) => work(db),
  };
  return { db, signals };
}

describe('withStatementDeadline', () => {
  it('fails a statement that gets no answer with a retriable FERRY_TIMEOUT and aborts its signal', async () => {
    const { db, signals } = fakeExecutor();
    const error = await withStatementDeadline(db, 20)
      .query('SELECT 1')
      .catch((e: unknown) => e);
    expect(isFerryError(error, 'FERRY_TIMEOUT')).toBe(true);
    expect((error as { retriable: boolean }).retriable).toBe(true);
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(true);
  });

  it('answers a statement that answers in time, and its signal then never aborts, past its deadline or when its caller stops', async () => {
    const { db, signals } = fakeExecutor([{ n: 1 }]);
    const caller = new AbortController();
    expect(await withStatementDeadline(db, 50).query('SELECT 1 AS n', [], { signal: caller.signal })).toEqual(
      [{ n: 1 }],
    );
    // The finished statement's deadline is cleared: an executor listening on it (fromPg closes
    // the connection when it aborts) never hears of it again.
    await new Promise((resolve) => setTimeout(resolve, 200));
    caller.abort(new Error('caller stopped later'));
    expect(signals[0]!.aborted).toBe(false);
  });

  it('does not send a statement whose caller stopped already: it fails with the reason, however the executor treats its signal', async () => {
    const { db, signals } = fakeExecutor(); // never answers, ignores its signal
    const caller = new AbortController();
    caller.abort(new Error('caller stopped before'));
    const error = await withStatementDeadline(db, 60_000)
      .query('SELECT 1', [], { signal: caller.signal })
      .catch((e: unknown) => e);
    expect((error as Error).message).toBe('caller stopped before');
    expect(signals).toHaveLength(0);
  });

  it('leaves nothing on the caller signal when the executor throws at once', () => {
    const caller = new AbortController();
    let listeners = 0;
    const add = caller.signal.addEventListener.bind(caller.signal);
    const remove = caller.signal.removeEventListener.bind(caller.signal);
    caller.signal.addEventListener = ((...args: Parameters<AbortSignal['addEventListener']>) => {
      listeners += 1;
      add(...args);
    }) as AbortSignal['addEventListener'];
    caller.signal.removeEventListener = ((...args: Parameters<AbortSignal['removeEventListener']>) => {
      listeners -= 1;
      remove(...args);
    }) as AbortSignal['removeEventListener'];
    const throwing: SqlExecutor = {
      inTransaction: false,
      query: () => {
        throw new Error('thrown at once');
      },
      execute: () => {
        throw new Error('thrown at once');
      },
      transaction: (work) => work(throwing),
    };
    const statement = withStatementDeadline(throwing, 60_000).query('SELECT 1', [], {
      signal: caller.signal,
    });
    return expect(statement)
      .rejects.toThrow('thrown at once')
      .then(() => expect(listeners).toBe(0));
  });

  it('gives up at once with the reason of a caller signal that aborts first', async () => {
    const { db } = fakeExecutor();
    const caller = new AbortController();
    const statement = withStatementDeadline(db, 60_000)
      .execute('SELECT 1', [], { signal: caller.signal })
      .catch((e: unknown) => e);
    caller.abort(new Error('caller stopped'));
    expect(((await statement) as Error).message).toBe('caller stopped');
  });

  it('leaves transactions to their own limits', async () => {
    const { db } = fakeExecutor([{ n: 2 }]);
    const bounded = withStatementDeadline(db, 20);
    expect(await bounded.transaction((tx) => tx.query('SELECT 2 AS n'))).toEqual([{ n: 2 }]);
    expect(bounded.inTransaction).toBe(false);
  });

  describe('tells the caller when a statement it gave up on can no longer take effect', () => {
    /** A statement that settles, after the deadline passed, as `late` says (with the signal it got). */
    async function abandoned(late: (signal: AbortSignal) => Promise<unknown>): Promise<boolean> {
      let settle!: () => void;
      const gate = new Promise<void>((resolve) => (settle = resolve));
      const send = <T>(options?: StatementOptions): Promise<T> =>
        gate.then(() => late(options!.signal!)) as Promise<T>;
      const db: SqlExecutor = {
        inTransaction: false,
        query: <T>(_text: string, _values?: readonly unknown[], options?: StatementOptions) =>
          send<T[]>(options),
        execute: (_text, _values, options) => send<number>(options),
        transaction: (work) => work(db),
      };
      let ended: Promise<boolean> | undefined;
      const error = await withStatementDeadline(db, 20)
        .query('SELECT 1', [], { onAbandoned: (late) => void (ended = late) })
        .catch((e: unknown) => e);
      expect(isFerryError(error, 'FERRY_TIMEOUT')).toBe(true);
      settle();
      return ended!;
    }

    it('true once PostgreSQL answered it late', async () => {
      expect(await abandoned(async () => [{ n: 1 }])).toBe(true);
    });

    it('true when PostgreSQL answered it with an error', async () => {
      const canceled = Object.assign(new Error('canceling statement'), { code: '57014' });
      expect(await abandoned(() => Promise.reject(canceled))).toBe(true);
    });

    it('true when the executor never sent it', async () => {
      expect(await abandoned((signal) => Promise.reject(signal.reason))).toBe(true);
    });

    it('false when its connection was lost: the server may still run it', async () => {
      const lost = new Error('Connection terminated unexpectedly');
      expect(await abandoned(() => Promise.reject(lost))).toBe(false);
      const reset = Object.assign(new Error('server closed the connection'), { code: '08006' });
      expect(await abandoned(() => Promise.reject(reset))).toBe(false);
    });
  });
});

describe('withDeadlines', () => {
  /** fakeExecutor (answering `rows`, or never) whose transactions record the options they were opened with. */
  function recording(options: { inTransaction?: boolean; rows?: unknown[] } = {}) {
    const { db } = fakeExecutor(options.rows);
    const opened: (TransactionOptions | undefined)[] = [];
    const executor: SqlExecutor = {
      ...db,
      inTransaction: options.inTransaction ?? false,
      transaction: (work, transactionOptions) => {
        opened.push(transactionOptions);
        return work(executor);
      },
    };
    return { executor, opened };
  }

  it('fails a statement outside a transaction that gets no answer with FERRY_TIMEOUT', async () => {
    const error = await withDeadlines(recording().executor, 20)
      .query('SELECT 1')
      .catch((e: unknown) => e);
    expect(isFerryError(error, 'FERRY_TIMEOUT')).toBe(true);
  });

  it('opens transactions with the deadline as timeout and max wait, unless the caller gives its own', async () => {
    const { executor, opened } = recording({ rows: [{ xid: '1' }] });
    const bounded = withDeadlines(executor, 60_000);
    expect(await bounded.transaction(async () => 'done')).toBe('done');
    await bounded.transaction(async () => undefined, { timeoutMs: 5_000 });
    expect(opened.map((o) => ({ timeoutMs: o?.timeoutMs, maxWaitMs: o?.maxWaitMs }))).toEqual([
      { timeoutMs: 60_000, maxWaitMs: 60_000 },
      { timeoutMs: 5_000, maxWaitMs: 60_000 },
    ]);
    expect(opened.every((o) => o?.signal?.aborted === false)).toBe(true);
  });

  it('fails a transaction that never settles with a retriable FERRY_TIMEOUT and aborts its signal', async () => {
    const { executor, opened } = recording();
    const error = await withDeadlines(executor, 20)
      .transaction(() => new Promise<never>(() => undefined))
      .catch((e: unknown) => e);
    expect(isFerryError(error, 'FERRY_TIMEOUT')).toBe(true);
    expect((error as { retriable: boolean }).retriable).toBe(true);
    // The adapter is told (fromPg closes the connection), whatever the transaction was doing.
    expect(opened[0]?.signal?.aborted).toBe(true);
  });

  // Review 99: the caller's signal was joined with AbortSignal.any, which Node 20 keeps in the
  // caller's signal until it aborts: one entry per transaction under a signal living longer.
  it("leaves nothing in a caller's long-lived signal once its transactions settled, and passes its abort on meanwhile", async () => {
    const { executor, opened } = recording({ rows: [{ xid: '1' }] });
    const bounded = withDeadlines(executor, 1_000);
    const caller = new AbortController();
    for (let n = 0; n < 50; n += 1)
      await bounded.transaction(async () => undefined, { signal: caller.signal });
    expect(heldBy(caller.signal)).toBe(0);
    let started!: () => void;
    const working = new Promise<void>((resolve) => (started = resolve));
    const running = bounded.transaction(
      () => {
        started();
        return new Promise<never>(() => undefined);
      },
      { signal: caller.signal },
    );
    running.catch(() => undefined);
    await working;
    caller.abort(new Error('stopping'));
    expect(opened.at(-1)?.signal?.aborted).toBe(true);
  });

  it("leaves the caller's open transaction, and its limits, to the caller", () => {
    const { executor } = recording({ inTransaction: true });
    expect(withDeadlines(executor, 20)).toBe(executor);
  });
});

describe('statementTimeoutOption', () => {
  it('defaults to 30 s and refuses values outside 100 ms to 1 h, naming the option', () => {
    expect(statementTimeoutOption('statementTimeoutMs', undefined)).toBe(30_000);
    expect(statementTimeoutOption('statementTimeoutMs', 100)).toBe(100);
    for (const bad of [99, 3_600_001, 1.5, Number.NaN]) {
      let error: unknown;
      try {
        statementTimeoutOption('stats.statementTimeoutMs', bad);
      } catch (e) {
        error = e;
      }
      expect(isFerryError(error, 'FERRY_CONFIG_INVALID')).toBe(true);
      expect((error as Error).message).toMatch(/stats\.statementTimeoutMs/);
    }
  });
});
