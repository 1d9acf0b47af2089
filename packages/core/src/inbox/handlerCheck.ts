import type { InboxAcceptInput } from '../contracts';
import { FerryError } from '../errors';
import { TRANSPORT_REJECT_REASONS } from '../transport/errors';
import type { BatchOutcome } from './accept';
import type { ReceiptKey } from './types';

/**
 * Whether an inbox with these handlers takes messages for `consumer`. An inbox without any
 * handler is an acceptance-only inbox (its workers run elsewhere) and takes every name.
 */
export function handlesConsumer(handlerNames: readonly string[], consumer: string): boolean {
  return handlerNames.length === 0 || handlerNames.includes(consumer);
}

/** The error a transport raises when attached for a consumer name no handler is registered for. */
export function handlerMissingError(consumer: string, handlerNames: readonly string[]): FerryError {
  return new FerryError(
    'FERRY_HANDLER_MISSING',
    `no inbox handler is registered for consumer "${consumer}" (handlers: ${handlerNames.join(', ')})`,
    { details: { consumer, handlers: [...handlerNames] } },
  );
}

/**
 * Accepts the inputs whose consumer has a handler; the others become `invalid` with code
 * FERRY_HANDLER_MISSING instead of receipts no worker would ever claim. Order is kept.
 */
export async function acceptHandled<R extends ReceiptKey>(
  inputs: readonly InboxAcceptInput[],
  handlerNames: readonly string[],
  accept: (inputs: readonly InboxAcceptInput[]) => Promise<BatchOutcome<R>[]>,
): Promise<BatchOutcome<R>[]> {
  if (!Array.isArray(inputs)) return accept(inputs); // acceptBatch refuses it with a validation error
  // An entry that is not an object, or has no string consumer, is left to acceptBatch's own
  // input validation, which reports it as invalid with its reason.
  // Read once (the Inbox hands over readInputs' copies), and each decided once: the results are
  // put back in order by the same decisions.
  const list = Array.from({ length: inputs.length }, (_, i) => inputs[i] as InboxAcceptInput);
  const covers = list.map((input) => {
    if (typeof input !== 'object' || input === null) return true;
    const consumer: unknown = input.consumer;
    return typeof consumer !== 'string' || handlesConsumer(handlerNames, consumer);
  });
  const handled = list.filter((_, i) => covers[i]);
  if (handled.length === list.length) return accept(list);
  const accepted = handled.length === 0 ? [] : await accept(handled);
  let next = 0;
  return list.map((input, i): BatchOutcome<R> => {
    if (covers[i]) return accepted[next++] as BatchOutcome<R>;
    return {
      kind: 'invalid',
      code: 'FERRY_HANDLER_MISSING',
      reason: handlerMissingError(String(input.consumer), handlerNames).message,
      rejectReason: TRANSPORT_REJECT_REASONS.handlerMissing,
    };
  });
}
