import { AsyncLocalStorage } from 'node:async_hooks';
import type { SqlExecutor } from './executor';

/**
 * ferry's one savepoint: the change of a dry run (audited), run and rolled back inside the
 * caller's transaction.
 *
 * A savepoint rolled back undoes everything sent on its transaction since it was set, whoever sent
 * it. Two ferry calls may share the application's transaction at once (a Prisma or Kysely
 * transaction runs the statements of concurrent calls, interleaved): an emit, a real admin action
 * or a second dry run whose statements landed between a dry run's SAVEPOINT and its ROLLBACK TO
 * was undone although it had answered success, and a second dry run's savepoint of the same name
 * took the first one's place, so one dry run's change committed (review: operator plane, item 1).
 * So while a dry run holds its savepoint on an application's transaction, the other ferry calls
 * on that transaction (the same object: the Prisma or Kysely transaction, the pg client, the
 * executor) wait for it to end (takingTurns: the executors the application's transactions are
 * given, applicationTransaction.ts). Their wait ends with the dry run, whose statements have the
 * caller's limits. The application's own statements on the transaction are not ferry's to hold:
 * it must not send any while a dry run of its own runs there.
 *
 * Each savepoint has its own name, and is released after its rollback: no savepoint of the
 * caller's is shadowed, none of ferry's is left in the caller's transaction.
 */

/** A dry run holding, from its first statement, the application transactions it runs on. */
interface Hold {
  readonly keys: Set<object>;
  readonly ended: Promise<void>;
}

const current = new AsyncLocalStorage<Hold>();
const holders = new WeakMap<object, Hold>();
let savepoints = 0;

/**
 * Runs `work` on `tx` inside a savepoint that is rolled back and released afterwards, whatever
 * `work` does; `tx` (an application transaction given through takingTurns) is this call's alone
 * meanwhile.
 */
export function inRolledBackSavepoint<T>(tx: SqlExecutor, work: () => Promise<T>): Promise<T> {
  let end!: () => void;
  const hold: Hold = { keys: new Set(), ended: new Promise<void>((resolve) => (end = resolve)) };
  savepoints = (savepoints % Number.MAX_SAFE_INTEGER) + 1;
  const name = `ferry_dry_run_${savepoints}`;
  return current.run(hold, async () => {
    try {
      await tx.execute(`SAVEPOINT ${name}`);
      try {
        return await work();
      } finally {
        await tx.execute(`ROLLBACK TO SAVEPOINT ${name}`);
        await tx.execute(`RELEASE SAVEPOINT ${name}`);
      }
    } finally {
      for (const key of hold.keys) if (holders.get(key) === hold) holders.delete(key);
      end();
    }
  });
}

/** Sends `send` on the application transaction `key` once no other call's dry run holds it. */
async function inTurn<T>(key: object, send: () => Promise<T>): Promise<T> {
  const mine = current.getStore();
  for (let holder = holders.get(key); holder !== undefined && holder !== mine; holder = holders.get(key)) {
    await holder.ended;
  }
  if (mine !== undefined) {
    holders.set(key, mine);
    mine.keys.add(key);
  }
  return send();
}

/**
 * `db`, ferry's executor inside the application's transaction `key`, taking turns with the dry
 * runs of other calls on `key` (inRolledBackSavepoint). Not in a transaction (ferry opens its
 * own): `db` as it is.
 */
export function takingTurns(key: object, db: SqlExecutor): SqlExecutor {
  if (!db.inTransaction) return db;
  const turns: SqlExecutor = {
    inTransaction: true,
    query: (text, values, options) => inTurn(key, () => db.query(text, values, options)),
    execute: (text, values, options) => inTurn(key, () => db.execute(text, values, options)),
    transaction: (work, options) =>
      db.transaction((tx) => work(tx === db ? turns : takingTurns(key, tx)), options),
  };
  return turns;
}
