import { TRANSPORT_REJECT_REASONS, TRANSPORT_RETRIES } from '@ferry/core/transport';

/**
 * Broker failures are translated at the boundary: callers only ever see a FerryError with
 * code `FERRY_TRANSPORT_ERROR` (retriable) or `FERRY_CLOSED`.
 */
export { transportError, closedError, describeTransportError as describeError } from '@ferry/core/transport';

/** Why a delivery was dead-lettered; travels in the `x-ferry-reject-reason` header. */
export const REJECT_REASONS = {
  ...TRANSPORT_REJECT_REASONS,
  unsupportedContentType: 'unsupported_content_type',
  retriesExhausted: TRANSPORT_RETRIES.exhaustedReason,
} as const;

export type RejectReason = (typeof REJECT_REASONS)[keyof typeof REJECT_REASONS];

/**
 * AMQP reply codes an attach attempt can meet that only an operator can fix: 403 ACCESS_REFUSED
 * (credentials or permissions), 406 PRECONDITION_FAILED (a queue or exchange exists with other
 * arguments or type than the consumer declares) and 530 NOT_ALLOWED (e.g. the virtual host).
 */
const REFUSAL_CODES: ReadonlySet<number> = new Set([403, 406, 530]);

/** The reply code of an amqplib channel or handshake error, when it carries one. */
function replyCode(error: unknown): number | null {
  if (typeof error !== 'object' || error === null) return null;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'number') return code;
  const match = /\b(\d{3}) \([A-Z-]+\)/.exec(String((error as { message?: unknown }).message ?? ''));
  return match ? Number(match[1]) : null;
}

/** Whether an attach attempt failed in a way only an operator can fix (REFUSAL_CODES). */
export function isRefusal(error: unknown): boolean {
  const code = replyCode(error);
  return code !== null && REFUSAL_CODES.has(code);
}
