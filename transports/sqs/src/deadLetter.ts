import {
  SendMessageBatchCommand,
  type Message,
  type SendMessageBatchRequestEntry,
} from '@aws-sdk/client-sqs';
import { FERRY_HEADERS } from '@ferry/core';
import type { SqsConnection } from './connection';
import { isFifoQueue } from './topology';
import { messageSize, sqsText, type Attributes } from './wire';

/** Carries the human-readable detail beside the reason code of `x-ferry-reject-reason`. */
export const REJECT_DETAIL_ATTRIBUTE = 'x-ferry-reject-detail';

/** SQS allows 10 attributes per message; two are reserved for the reason and its detail. */
const MAX_COPIED_ATTRIBUTES = 8;

export interface DeadLetterItem {
  readonly message: Message;
  readonly messageId: string | null;
  readonly reason: string;
  readonly detail: string;
}

/**
 * Sends copies of `items` (at most 10) to the dead-letter queue with the reason as an
 * attribute, keeping the body and up to 8 original attributes (ferry's first). The copies go
 * in SendMessageBatch requests of at most `maxBatchBytes` each (a copy alone over it is sent
 * without the original attributes). Resolves to the items SQS confirmed, which the caller
 * then deletes from the source queue; the others stay and come back. FIFO dead-letter queues
 * get the original group and MessageId as the deduplication id. `signal` is the deadline of
 * all requests together: a copy SQS did not confirm by then counts as not sent (its original
 * stays; SQS may still have taken the copy, so the dead-letter queue may hold it twice).
 */
export async function sendToDeadLetterQueue(
  connection: SqsConnection,
  deadLetterQueueUrl: string,
  items: readonly DeadLetterItem[],
  maxBatchBytes: number,
  onFailure: (error: unknown) => void,
  signal: AbortSignal,
): Promise<DeadLetterItem[]> {
  const fifo = isFifoQueue(deadLetterQueueUrl);
  const entries = items.map((item, index) => deadLetterEntry(item, `d${index}`, fifo, maxBatchBytes));
  const sent = new Set<string>();
  for (const chunk of chunksBySize(entries, maxBatchBytes)) {
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
          new Error(`dead-letter entry ${failed.Id} was not sent: ${failed.Code}: ${failed.Message}`),
        );
      }
      for (const entry of output.Successful ?? []) if (entry.Id) sent.add(entry.Id);
    } catch (error) {
      onFailure(error);
      if (signal.aborted) break;
    }
  }
  return items.filter((_, index) => sent.has(`d${index}`));
}

function deadLetterEntry(
  item: DeadLetterItem,
  id: string,
  fifo: boolean,
  maxBytes: number,
): SendMessageBatchRequestEntry & { MessageBody: string } {
  const reason: Attributes = {
    [FERRY_HEADERS.rejectReason]: { DataType: 'String', StringValue: sqsText(item.reason) },
    // The detail may quote decoded text SQS refuses (U+FFFF): one such copy failed the request.
    [REJECT_DETAIL_ATTRIBUTE]: {
      DataType: 'String',
      StringValue: sqsText((item.detail || item.reason).slice(0, 1_000)),
    },
  };
  const body = item.message.Body ?? '';
  const withOriginals = { ...copiedAttributes(item.message.MessageAttributes ?? {}), ...reason };
  return {
    Id: id,
    MessageBody: body,
    MessageAttributes: messageSize(body, withOriginals) <= maxBytes ? withOriginals : reason,
    ...(fifo
      ? {
          MessageGroupId: item.message.Attributes?.MessageGroupId ?? 'ferry-dead-letter',
          MessageDeduplicationId: item.message.MessageId,
        }
      : {}),
  };
}

/** Consecutive groups whose summed message sizes stay within `maxBytes` (an oversize entry goes alone). */
function chunksBySize<E extends { MessageBody: string; MessageAttributes?: Attributes }>(
  entries: readonly E[],
  maxBytes: number,
): E[][] {
  const chunks: E[][] = [];
  let current: E[] = [];
  let bytes = 0;
  for (const entry of entries) {
    const size = messageSize(entry.MessageBody, entry.MessageAttributes);
    if (current.length > 0 && bytes + size > maxBytes) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(entry);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

function copiedAttributes(attributes: Attributes): Attributes {
  const ferryFirst = Object.keys(attributes)
    .filter((name) => name !== FERRY_HEADERS.rejectReason && name !== REJECT_DETAIL_ATTRIBUTE)
    .sort((a, b) => Number(!a.startsWith('x-ferry-')) - Number(!b.startsWith('x-ferry-')));
  const copied: Attributes = {};
  for (const name of ferryFirst.slice(0, MAX_COPIED_ATTRIBUTES)) copied[name] = attributes[name]!;
  return copied;
}
