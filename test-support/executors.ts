import type { SqlExecutor } from '@ferry/core';

/** `inner`, running `hook` before it sends a statement starting with `statement` (in a transaction too). */
export function pausingBefore(inner: SqlExecutor, statement: string, hook: () => Promise<void>): SqlExecutor {
  const wrap = (db: SqlExecutor): SqlExecutor => ({
    get inTransaction() {
      return db.inTransaction;
    },
    query: (text, values, options) => db.query(text, values, options),
    execute: async (text, values, options) => {
      if (text.startsWith(statement)) await hook();
      return db.execute(text, values, options);
    },
    transaction: (work, options) => db.transaction((tx) => work(wrap(tx)), options),
  });
  return wrap(inner);
}

const unreachable = async (): Promise<never> => {
  throw new Error('the options should have been refused before any statement');
};

/** A SqlExecutor by its shape that answers no statement: for options refused before any. */
export const refusingExecutor = {
  inTransaction: false,
  query: unreachable,
  execute: unreachable,
  transaction: unreachable,
} as unknown as SqlExecutor;
