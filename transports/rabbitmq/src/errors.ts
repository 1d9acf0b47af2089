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

/**
 * Reply texts RabbitMQ gives under those codes for a state that ends by itself, retried like 405
 * RESOURCE_LOCKED (an exclusive queue of another connection): another consumer holds the queue
 * exclusively (403 "in exclusive use"), a connection, channel or queue limit is reached (530 or
 * 406 "... limit ... is reached", "has reached the ... channel_max"), the virtual host is
 * restarting (530 "is down").
 */
const TEMPORARY_TEXTS: readonly RegExp[] = [
  /\bin exclusive use\b/,
  /\blimit\b.*\bis reached\b/,
  /\bhas reached the\b/,
  /\bis down\b/,
];

/**
 * The work queue is a stream queue (review 106): ferry's consumer needs what a stream does not
 * have (a requeue; a consumer re-attaching at its next offset skips what it missed; a nack closes
 * the whole connection, 540). Found at attach (streamCheck.ts): queue.declare-ok counts no
 * consumer of a stream, the consumer's own included. A refusal only an operator can fix.
 */
export class StreamQueueError extends Error {
  constructor(queue: string) {
    super(
      `queue ${queue} is a stream queue (it counts no consumer, this one's included): ferry's consumer ` +
        'needs acks and requeues, which a stream does not keep (a consumer re-attaching skips what it ' +
        'missed, a requeue closes the connection); attach it to a classic or quorum queue',
    );
    this.name = 'StreamQueueError';
  }
}

/**
 * The connection had no channel left to open (review 122): amqplib numbers a connection's channels
 * from 1 to the channelMax negotiated (the URL's query parameter, the broker's channel_max: 2047 by
 * default) and refuses the next one ("No channels left to allocate"). A consumer holds two (the one
 * it consumes on and the one for its dead-letter and retry copies), a publisher one, and one more
 * per destination the broker refused while it publishes. A refusal for ready(): the channels are
 * the application's own, held as long as its consumers run.
 */
export class ChannelsExhaustedError extends Error {
  constructor(channelMax: number | null, options?: ErrorOptions) {
    super(
      `the connection has no channel left to open (channelMax ${channelMax ?? 'unknown'} negotiated, all in ` +
        'use): a consumer holds two channels (the one it consumes on and one for its dead-letter and retry ' +
        'copies), a publisher one and one more per refused destination while it publishes; attach fewer ' +
        "consumers to one RabbitConnection, or raise channelMax (the URL's query parameter, the broker's channel_max)",
      options,
    );
    this.name = 'ChannelsExhaustedError';
  }
}

/** The reply code of an amqplib channel or handshake error, when it carries one. */
function replyCode(error: unknown): number | null {
  if (typeof error !== 'object' || error === null) return null;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'number') return code;
  const match = /\b(\d{3}) \([A-Z-]+\)/.exec(String((error as { message?: unknown }).message ?? ''));
  return match ? Number(match[1]) : null;
}

/**
 * The exchange type RabbitMQ refused as unknown (503 COMMAND_INVALID "unknown exchange type 'x-…'",
 * a connection error: no plugin of the broker registers it), or null.
 */
export function unknownExchangeType(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null;
  const match = /unknown exchange type '([^']*)'/.exec(
    String((error as { message?: unknown }).message ?? ''),
  );
  return match ? match[1]! : null;
}

/**
 * Whether an attach attempt failed in a way only an operator can fix (REFUSAL_CODES, unless its
 * text is one of TEMPORARY_TEXTS; 503 for an exchange type no plugin of the broker registers; a
 * stream queue; no channel left on the connection).
 */
export function isRefusal(error: unknown): boolean {
  if (error instanceof StreamQueueError || error instanceof ChannelsExhaustedError) return true;
  const code = replyCode(error);
  if (code !== null && code === 503 && unknownExchangeType(error) !== null) return true;
  if (code === null || !REFUSAL_CODES.has(code)) return false;
  const message = String((error as { message?: unknown }).message ?? '');
  return !TEMPORARY_TEXTS.some((text) => text.test(message));
}
