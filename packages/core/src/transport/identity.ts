import { reservedIdFault } from '../inbox/messageIds';
import { discardAnswer } from '../unreadAnswer';
import { IDENTIFIER_LIMITS } from '../validate/identifierLimits';
import { identifierFault, textFault } from '../validate/text';
import { describeTransportError } from './errors';

/** What a consumer's identity extractor answered for one message. */
export type ExtractedIdentity =
  { readonly ok: true; readonly messageId: string } | { readonly ok: false; readonly detail: string };

/**
 * Calls the application's identity extractor for one message. It runs inside the consumer's
 * batch, so whatever it does costs that message alone: a throw (of anything, even a value that
 * throws when read) or an answer that is not a non-empty string (a number, an object, a Promise:
 * the extractor is synchronous and never awaited) is no identity, and `detail` says why; the
 * transport dead-letters the message as `missing_identity`.
 */
export function extractIdentity<M>(
  extractor: (message: M) => string | null | undefined,
  message: M,
): ExtractedIdentity {
  let value: unknown;
  try {
    value = extractor(message);
  } catch (error) {
    return { ok: false, detail: `the identity extractor threw: ${describeTransportError(error)}` };
  }
  if (typeof value === 'string' && value.length > 0) return { ok: true, messageId: value };
  discardAnswer(value);
  if (value === null || value === undefined || value === '') {
    return { ok: false, detail: 'the identity extractor gave none' };
  }
  return { ok: false, detail: `the identity extractor returned ${kindOf(value)}, not a string` };
}

function kindOf(value: unknown): string {
  try {
    if (value instanceof Promise) return 'a Promise (it must answer synchronously)';
  } catch {
    // A Proxy whose prototype cannot be read: named by its typeof below.
  }
  return `a ${typeof value}`;
}

/**
 * Why a delivery's message id (from a header, the broker's own id or the extractor) names no
 * message, as a dead-letter detail, or null: it shows nothing (whitespace, zero-width characters)
 * or holds a control character or a line break (identifierFault), or begins with ferry's own
 * prefix `ferry:` (reservedIdFault: replays' ids); the rule acceptance applies too. Every
 * transport dead-letters such a delivery as `missing_identity` before acceptance.
 */
export function messageIdFault(messageId: string): string | null {
  const fault = identifierFault(messageId) ?? reservedIdFault(messageId);
  return fault === null ? null : `message id ${JSON.stringify(messageId.slice(0, 64))} ${fault}`;
}

/**
 * Whether a message's own `x-ferry-message-id` value, as its transport holds it (text, bytes,
 * Kafka's repeated values; undefined when absent), is there for deadLetterIdentity: an empty one
 * is not, nor a name repeated with empty values only. The consumer reads an empty header as none (readFerryHeaders) and uses another identity
 * (the AMQP messageId, the extractor's), which the copy must carry in its place: an empty header
 * kept as it was left the copy without the identity its source was known by (review 87).
 */
export function hasFerryMessageId(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === 'string' || value instanceof Uint8Array) return value.length > 0;
  // Kafka's repeated values: one empty value repeated is read as that value, none.
  if (Array.isArray(value)) return value.some((one) => hasFerryMessageId(one));
  return true;
}

/**
 * The identity a dead-letter copy must carry as ferry's `x-ferry-message-id`, or null. A message
 * without that header of its own was known by the broker's id (SQS MessageId, Kafka
 * topic-partition-offset) or by what the identity extractor read: the copy, a new message in
 * another queue or topic, keeps neither, and a ferry consumer draining the dead-letter queue would
 * take each copy of one message (one made twice when its source was not acked) as a message of
 * its own. With the consumer's identity in the header, which every consumer reads before any
 * other, the copies are one receipt. Null when the message had the header naming an id
 * (`hasFerryHeader`: hasFerryMessageId; copied as it is), or no identity acceptance takes (its
 * length, messageIdFault, textFault: a NUL, an unpaired surrogate).
 */
export function deadLetterIdentity(messageId: string | null, hasFerryHeader: boolean): string | null {
  if (messageId === null || hasFerryHeader) return null;
  // Every rule acceptance applies to a message id (inbox/validateInput.ts): an id it would refuse
  // names no receipt, and one of a megabyte would not fit a broker's header frame (the copy fails).
  const acceptable =
    messageId.length <= IDENTIFIER_LIMITS.messageId &&
    messageIdFault(messageId) === null &&
    textFault(messageId) === null;
  return acceptable ? messageId : null;
}
