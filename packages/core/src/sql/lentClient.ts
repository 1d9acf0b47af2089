import type { PoolClient } from 'pg';
import { FerryError } from '../errors';

const ENDED = 'the transaction has ended: its client can no longer be used';

/** `end()` on the lent client, refused as a query is after the transaction (refuseLater). */
const endRefused = refuseLater(
  'ferry ends the transaction and hands its connection back: a handler must not end() the client',
);

/**
 * The PoolClient a transaction's work gets (pgTransactions), standing for the connection ferry
 * checked out: `release()` is refused (ferry releases it when the transaction ends, so it never
 * goes back to the pool inside a BEGIN), `end()` too (it would close the connection under ferry's
 * transaction: a rejected promise, or its callback's error), and after `end()` every method is refused, so work that
 * keeps the client after returning cannot write outside its transaction, or inside the next one
 * on that connection. That holds for a method read during the transaction and kept (a repository
 * built with `client.query.bind(client)`): each one handed out checks, at every call, that the
 * transaction is still open. Methods run on the client itself, never through this stand-in.
 */
export function lendClient(client: PoolClient): { client: PoolClient; end(): void } {
  let ended = false;
  const handedOut = new Map<PropertyKey, (...args: unknown[]) => unknown>();
  const refused = refuseLater(ENDED);
  const lent = new Proxy(client, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (property === 'release') return refuse('ferry releases the transaction’s client when it ends');
      // Ending the connection under ferry's transaction would fail its completion as if the
      // application had ended the pool given to ferry (FERRY_CLOSED), not as this handler's misuse.
      if (property === 'end') return endRefused;
      if (typeof value !== 'function') return value;
      if (ended) return refused;
      let method = handedOut.get(property);
      if (!method) {
        const own = value as (...args: unknown[]) => unknown;
        method = (...args: unknown[]) => (ended ? refused(...args) : own.apply(target, args));
        handedOut.set(property, method);
      }
      return method;
    },
  });
  lentOpen.add(lent);
  return {
    client: lent,
    end: () => {
      ended = true;
      lentOpen.delete(lent);
    },
  };
}

/** The lent clients whose transaction is still open (see inLentTransaction). */
const lentOpen = new WeakSet<object>();

/**
 * Whether `client` is a client lendClient lent whose transaction is still open: ferry's BEGIN was
 * answered before it was lent, so it is inside ferry's transaction whatever the handler has sent
 * on it and not yet had answered (fromPgClient refuses the application's own client then, its
 * status unknown; a handler's `Promise.all([tx.query(...), emit(tx, ...)])` was refused so, on
 * every attempt: review 90).
 */
export function inLentTransaction(client: object): boolean {
  return lentOpen.has(client);
}

function misuse(reason: string): FerryError {
  return new FerryError('FERRY_TRANSACTION_MISUSE', reason);
}

function refuse(reason: string): () => never {
  return () => {
    throw misuse(reason);
  };
}

/** Rejects like a failed query: through the callback when one is given, else the promise. */
function refuseLater(reason: string): (...args: unknown[]) => Promise<never> | undefined {
  return (...args) => {
    const callback = args.at(-1);
    if (typeof callback !== 'function') {
      // Marked handled: a caller that awaits it still gets the refusal, while a method read for a
      // value, not awaited (emit reads `getTransactionStatus()` to tell a pg client), leaves no
      // unhandled rejection behind, which ended the process (review 40).
      const refusal = Promise.reject(misuse(reason));
      refusal.catch(() => undefined);
      return refusal;
    }
    process.nextTick(() => (callback as (error: Error) => void)(misuse(reason)));
    return undefined;
  };
}
