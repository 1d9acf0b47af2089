/**
 * Message ids ferry makes itself begin with FERRY_MESSAGE_ID_PREFIX, and acceptance refuses a
 * delivered message id that does (validateInput.ts): the two namespaces share the identity
 * (scope, consumer, message id), so a delivery carrying a replay's id would otherwise take the
 * replay's place, or be taken for a duplicate of it. Exact, case-sensitive, as the identity is.
 */
export const FERRY_MESSAGE_ID_PREFIX = 'ferry:';

/** A replay receipt's message id is this prefix and the operator's request id. */
export const REPLAY_MESSAGE_ID_PREFIX = `${FERRY_MESSAGE_ID_PREFIX}replay:`;

/** Why a delivered message id is in ferry's own namespace, or null (acceptance and every transport). */
export function reservedIdFault(messageId: string): string | null {
  return messageId.startsWith(FERRY_MESSAGE_ID_PREFIX)
    ? `must not begin with '${FERRY_MESSAGE_ID_PREFIX}' (ids so made are ferry's own: replays)`
    : null;
}
