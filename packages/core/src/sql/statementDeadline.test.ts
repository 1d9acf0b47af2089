import { describe, expect, it } from '@jest/globals';
import { isFerryError } from '../errors';
import type { SqlExecutor, StatementOptions } from './executor';
import { withStatementDeadline } from './statementDeadline';

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

  it('answers a statement that answers in time, and its signal then stops without aborting the statement', async () => {
    const { db, signals } = fakeExecutor([{ n: 1 }]);
    expect(await withStatementDeadline(db, 60_000).query('SELECT 1 AS n')).toEqual([{ n: 1 }]);
    // The finished statement's deadline is stopped (the timer cleared) through its signal.
    expect(signals[0]!.aborted).toBe(true);
    expect((signals[0]!.reason as { name?: string }).name).not.toBe('TimeoutError');
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
});
