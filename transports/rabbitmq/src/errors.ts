import { TRANSPORT_REJECT_REASONS } from '@ferry/core/transport';

/**
 * Broker failures are translated at the boundary: callers only ever see a FerryError with
 * code `FERRY_TRANSPORT_ERROR` (retriable) or `FERRY_CLOSED`.
 */
export { transportError, closedError, describeTransportError as describeError } from '@ferry/core/transport';

/** Why a delivery was dead-lettered; travels in the `x-ferry-reject-reason` header. */
export const REJECT_REASONS = {
  ...TRANSPORT_REJECT_REASONS,
  unsupportedContentType: 'unsupported_content_type',
  retriesExhausted: 'transport_retries_exhausted',
} as const;

export type RejectReason = (typeof REJECT_REASONS)[keyof typeof REJECT_REASONS];
