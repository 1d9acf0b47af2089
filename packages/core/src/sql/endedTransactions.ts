import { FerryError } from '../errors';

/**
 * The inbox handler transactions that have ended (their `context.tx`), whatever the adapter: a
 * handler that kept its `tx` (a repository holding it, a promise awaited late) and emits on it
 * afterwards is refused with FERRY_TRANSACTION_MISUSE, not retriable. Kysely and Prisma answered
 * such a late emit with a retriable FERRY_DATABASE_ERROR / FERRY_TIMEOUT, which told the caller
 * to try again on a transaction that can never run anything (review 40).
 */
const ended = new WeakSet<object>();

/** `tx`'s handler transaction has ended (committed or rolled back). */
export function markTransactionEnded(tx: unknown): void {
  if (tx !== null && (typeof tx === 'object' || typeof tx === 'function')) ended.add(tx);
}

/** Throws FERRY_TRANSACTION_MISUSE when `tx` is a handler transaction that has ended. */
export function refuseEndedTransaction(tx: unknown): void {
  if (tx === null || (typeof tx !== 'object' && typeof tx !== 'function') || !ended.has(tx)) return;
  throw new FerryError(
    'FERRY_TRANSACTION_MISUSE',
    "an inbox handler's transaction (context.tx) was used after it ended: emit within the handler, before it returns",
  );
}
