import {
  SendMessageBatchCommand,
  type Message,
  type MessageAttributeValue,
  type SendMessageBatchRequestEntry,
} from '@aws-sdk/client-sqs';
import { FERRY_HEADERS, FerryConfigError, type FerryError } from '@ferry/core';
import {
  consecutiveRuns,
  deadLetterIdentity,
  hasFerryMessageId,
  setOwnProperty,
  withoutOverruledTenant,
  type DeadLetterTenant,
} from '@ferry/core/transport';
import type { SqsConnection } from './connection';
import { errorName, transportError } from './errors';
import { isFifoQueue } from './queueUrl';
import { WIRE_ATTRIBUTES, attributeTextFault, messageSize, sqsText, type Attributes } from './wire';

/** Carries the human-readable detail beside the reason code of `x-ferry-reject-reason`. */
export const REJECT_DETAIL_ATTRIBUTE = 'x-ferry-reject-detail';

/** SQS allows 10 attributes per message; two are reserved for the reason and its detail. */
const MAX_COPIED_ATTRIBUTES = 8;
/** The longest reject detail a copy carries, in characters (before it is cut to the room left). */
const MAX_DETAIL_CHARS = 1_000;

export interface DeadLetterItem {
  readonly message: Message;
  readonly messageId: string | null;
  /** The tenant the copy carries as `x-ferry-tenant-id` (core deadLetterTenant): null none, undefined the message's own. */
  readonly tenant: DeadLetterTenant;
  readonly reason: string;
  readonly detail: string;
}

export interface DeadLetterLimits {
  /** Upper bound of one SendMessageBatch request (a copy over it goes alone). */
  readonly maxBatchBytes: number;
  /** Upper bound of one copy: the dead-letter queue's MaximumMessageSize. */
  readonly maxMessageBytes: number;
}

/**
 * Sends copies of `items` (at most 10) to the dead-letter queue: the body and up to 8 original
 * attributes (ferry's first), the reason and its detail as attributes, each copy within
 * `limits.maxMessageBytes` (deadLetterEntry), in SendMessageBatch requests of at most
 * `limits.maxBatchBytes`. Resolves to the items SQS confirmed, which the caller then deletes
 * from the source queue; the others stay and come back, and each failure is told to `onFailure`
 * as a FerryError naming the dead-letter queue (FerryConfigError when it does not exist). FIFO
 * dead-letter queues get the original group and MessageId as the deduplication id. `signal` is
 * the deadline of all requests together: a copy SQS did not confirm by then counts as not sent
 * (its original stays; SQS may still have taken the copy, so the dead-letter queue may hold it twice).
 */
export async function sendToDeadLetterQueue(
  connection: SqsConnection,
  deadLetterQueueUrl: string,
  items: readonly DeadLetterItem[],
  limits: DeadLetterLimits,
  onFailure: (error: FerryError) => void,
  signal: AbortSignal,
): Promise<DeadLetterItem[]> {
  const fifo = isFifoQueue(deadLetterQueueUrl);
  const entries = items.map((item, index) =>
    deadLetterEntry(item, `d${index}`, fifo, limits.maxMessageBytes),
  );
  const sent = new Set<string>();
  for (const chunk of chunksBySize(entries, limits.maxBatchBytes)) {
    try {
      const output = await connection.request(
        (sqs, abortSignal) =>
          sqs.send(new SendMessageBatchCommand({ QueueUrl: deadLetterQueueUrl, Entries: chunk }), {
            abortSignal,
          }),
        signal,
      );
      for (const failed of output.Failed ?? []) {
        onFailure(
          transportError(
            `dead-letter queue ${deadLetterQueueUrl} refused copy ${failed.Id}`,
            `${failed.Code}: ${failed.Message}`,
          ),
        );
      }
      for (const entry of output.Successful ?? []) if (entry.Id) sent.add(entry.Id);
    } catch (error) {
      onFailure(copyFailure(deadLetterQueueUrl, error));
      if (signal.aborted) break;
    }
  }
  return items.filter((_, index) => sent.has(`d${index}`));
}

/** A failed SendMessageBatch to the dead-letter queue, as callers see it. */
function copyFailure(deadLetterQueueUrl: string, error: unknown): FerryError {
  const name = errorName(error);
  if (name === 'QueueDoesNotExist' || name === 'AWS.SimpleQueueService.NonExistentQueue') {
    return new FerryConfigError(
      'deadLetter.queueUrl',
      `dead-letter queue ${deadLetterQueueUrl} does not exist (deleted after attach?): invalid messages stay in the consumer's queue until it exists again`,
    );
  }
  return transportError(`SendMessageBatch to dead-letter queue ${deadLetterQueueUrl} failed`, error);
}

/**
 * The copy of one item, never over `maxBytes` (SQS refuses a larger message): the body, then
 * as many attributes as fit, in this order: ferry's own original ones (WIRE_ATTRIBUTES: the
 * identity and tenant a redrive needs, first), the reject reason, the other original ones, and the reject detail,
 * cut to the bytes left. An attribute that does not fit is left out, so a copy of a message
 * at the queue's limit keeps its original attributes and carries no reason.
 */
function deadLetterEntry(
  item: DeadLetterItem,
  id: string,
  fifo: boolean,
  maxBytes: number,
): SendMessageBatchRequestEntry & { MessageBody: string } {
  const body = item.message.Body ?? '';
  const attributes: Attributes = {};
  let bytes = Buffer.byteLength(body, 'utf8');
  const put = (name: string, value: MessageAttributeValue): void => {
    const size = messageSize('', { [name]: value });
    if (bytes + size > maxBytes) return;
    setOwnProperty(attributes, name, value);
    bytes += size;
  };
  const [ferry, others] = copiedAttributes(withIdentity(item));
  for (const [name, value] of ferry) put(name, value);
  put(FERRY_HEADERS.rejectReason, { DataType: 'String', StringValue: sqsText(item.reason) });
  for (const [name, value] of others) put(name, value);
  // The detail may quote decoded text SQS refuses (U+FFFF): one such copy failed the request.
  const room = maxBytes - bytes - messageSize('', { [REJECT_DETAIL_ATTRIBUTE]: { DataType: 'String' } });
  const detail = utf8Prefix(sqsText((item.detail || item.reason).slice(0, MAX_DETAIL_CHARS)), room);
  if (detail.length > 0) put(REJECT_DETAIL_ATTRIBUTE, { DataType: 'String', StringValue: detail });
  return {
    Id: id,
    MessageBody: body,
    MessageAttributes: attributes,
    ...(fifo
      ? {
          MessageGroupId: item.message.Attributes?.MessageGroupId ?? 'ferry-dead-letter',
          MessageDeduplicationId: item.message.MessageId,
        }
      : {}),
  };
}

/**
 * The original attributes, plus `x-ferry-message-id` holding the identity the consumer used when
 * the original had none or an empty one (its SQS MessageId or the extracted id: deadLetterIdentity)
 * and `x-ferry-tenant-id` holding the tenant its tenant source gave it (deadLetterTenant), which
 * copiedAttributes then ranks first: a copy made twice (its delete failed) is one receipt once the
 * dead-letter queue is drained by a ferry consumer.
 */
function withIdentity(item: DeadLetterItem): Attributes {
  const attributes = item.message.MessageAttributes ?? {};
  const name = FERRY_HEADERS.messageId;
  const own = Object.hasOwn(attributes, name) ? attributes[name] : undefined;
  const id = deadLetterIdentity(item.messageId, hasFerryMessageId(own?.StringValue ?? own?.BinaryValue));
  const copied: Attributes = { ...withoutOverruledTenant(attributes, item.tenant) };
  // An id or tenant holding what SQS does not take (U+FFFF) would fail the copy's whole request.
  const put = (attribute: string, value: string | null | undefined): void => {
    const one = { [attribute]: { DataType: 'String', StringValue: value ?? '' } };
    if (typeof value === 'string' && attributeTextFault(one) === null)
      setOwnProperty(copied, attribute, one[attribute]!);
  };
  put(name, id);
  put(FERRY_HEADERS.tenantId, item.tenant);
  return copied;
}

/** The longest prefix of `text` (whole code points) of at most `maxBytes` UTF-8 bytes. */
function utf8Prefix(text: string, maxBytes: number): string {
  if (maxBytes <= 0) return '';
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    bytes += Buffer.byteLength(char, 'utf8');
    if (bytes > maxBytes) break;
    end += char.length;
  }
  return text.slice(0, end);
}

/** Consecutive groups whose summed message sizes stay within `maxBytes` (an oversize entry goes alone). */
function chunksBySize<E extends { MessageBody: string; MessageAttributes?: Attributes }>(
  entries: readonly E[],
  maxBytes: number,
): E[][] {
  return consecutiveRuns(
    entries,
    (entry) => messageSize(entry.MessageBody, entry.MessageAttributes),
    maxBytes,
  );
}

/**
 * Up to 8 original attributes, ferry's own (WIRE_ATTRIBUTES, in that order) and the others apart;
 * an earlier reject reason and detail are not copied, nor an attribute without a value: the SDK
 * reads an attribute named `__proto__` back as an own property whose value is undefined (taking
 * its size threw, for every delivery, so such a message never left its queue). A producer's
 * forged `x-ferry-*` names rank with the others, so they never push the identity or the tenant
 * out of the copy.
 */
function copiedAttributes(
  attributes: Attributes,
): [ferry: [string, MessageAttributeValue][], others: [string, MessageAttributeValue][]] {
  const rank = (name: string): number => {
    const wire = WIRE_ATTRIBUTES.indexOf(name);
    return wire === -1 ? WIRE_ATTRIBUTES.length : wire;
  };
  const copied = Object.entries(attributes)
    .filter(([, value]) => typeof value === 'object' && value !== null)
    .filter(([name]) => name !== FERRY_HEADERS.rejectReason && name !== REJECT_DETAIL_ATTRIBUTE)
    .sort(([a], [b]) => rank(a) - rank(b))
    .slice(0, MAX_COPIED_ATTRIBUTES);
  return [
    copied.filter(([name]) => WIRE_ATTRIBUTES.includes(name)),
    copied.filter(([name]) => !WIRE_ATTRIBUTES.includes(name)),
  ];
}
