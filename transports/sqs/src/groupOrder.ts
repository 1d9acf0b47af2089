import { FerryError, type InboxAcceptInput, type InboxAcceptResult } from '@ferry/core';
import { invalidFromError, isBatchWideFailure, type AcceptManyFn } from '@ferry/core/transport';

/** Results of FIFO messages not offered to the inbox, and the failure each is held behind. */
const held = new WeakMap<InboxAcceptResult, unknown>();

function heldResult(error: unknown): InboxAcceptResult {
  const result: InboxAcceptResult = {
    kind: 'invalid',
    code: 'FERRY_TRANSPORT_ERROR',
    reason: 'held behind an earlier message of its group whose acceptance failed',
    rejectReason: 'acceptance_failed',
  };
  held.set(result, error);
  return result;
}

/**
 * The failure a result of groupOrdered holds its message behind (it was not offered: it stays in
 * the queue and comes back after the retry backoff, never dead-lettered), else undefined.
 */
export function heldBehind(result: InboxAcceptResult): { readonly error: unknown } | undefined {
  return held.has(result) ? { error: held.get(result) } : undefined;
}

/**
 * `acceptMany` for a FIFO queue's batch, keeping each message group's order; one per received
 * batch, for every call acceptHolding makes with it (a batch retried whole or in parts after a
 * timeout). The inputs are offered whole; when that fails for one of them (a batch-wide failure,
 * isBatchWideFailure, is rethrown), or when a group already failed in an earlier call, they are
 * offered one at a time, in order, and once one fails alone (invalidFromError: dead-lettered, or
 * left to the redrive policy, from where it may come back and be accepted) the later messages of
 * its group are not offered, in this call or a later one: they stay in the queue behind it
 * (heldBehind), never accepted before it. acceptIsolated's halving alone would accept them first.
 * When a call accepted none and its first failure was retriable, every input is held (nothing
 * points at one of them), as acceptIsolated rethrows then.
 */
export function groupOrdered(
  acceptMany: AcceptManyFn,
  groupOf: (input: InboxAcceptInput) => string | null,
): AcceptManyFn {
  const failed = new Map<string | null, unknown>();
  return async (inputs) => {
    if (!inputs.some((input) => failed.has(groupOf(input)))) {
      try {
        return await acceptMany(inputs);
      } catch (error) {
        if (isBatchWideFailure(error) || inputs.length === 1) throw error;
      }
    }
    const results: InboxAcceptResult[] = [];
    let accepted = 0;
    let first: unknown;
    for (const input of inputs) {
      const group = groupOf(input);
      if (failed.has(group)) {
        results.push(heldResult(failed.get(group)));
        continue;
      }
      try {
        const [result] = await acceptMany([input]);
        if (result === undefined) throw new Error('acceptMany returned no result for 1 input');
        results.push(result);
        accepted += 1;
      } catch (error) {
        if (isBatchWideFailure(error)) throw error;
        first ??= error;
        results.push(invalidFromError(error));
        failed.set(group, error);
      }
    }
    if (accepted === 0 && first instanceof FerryError && first.retriable)
      return inputs.map(() => heldResult(first));
    return results;
  };
}
