import {
  SendMessageBatchCommand,
  type Message,
  type SendMessageBatchRequestEntry,
} from '@aws-sdk/client-sqs';
import { FERRY_HEADERS } from '@ferry/core';
import type { SqsConnection } from './connection';
import { isFifoQueue } from './topology';
import type { Attributes } from './wire';

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
 * attribute, keeping the body and up to 8 original attributes (ferry's first). Resolves to
 * the items SQS confirmed, which the caller then deletes from the source queue; the others
 * stay and come back. FIFO dead-letter queues get the original group and MessageId as the
 * deduplication id.
 */
export async function sendToDeadLetterQueue(
  connection: SqsConnection,
  deadLetterQueueUrl: string,
  items: readonly DeadLetterItem[],
  onFailure: (error: unknown) => void,
): Promise<DeadLetterItem[]> {
  if (items.length === 0) return [];
  const fifo = isFifoQueue(deadLetterQueueUrl);
  const entries: SendMessageBatchRequestEntry[] = items.map((item, index) => ({
    Id: `d${index}`,
    MessageBody: item.message.Body ?? '',
    MessageAttributes: {
      ...copiedAttributes(item.message.MessageAttributes ?? {}),
      [FERRY_HEADERS.rejectReason]: { DataType: 'String', StringValue: item.reason },
      [REJECT_DETAIL_ATTRIBUTE]: { DataType: 'String', StringValue: item.detail || item.reason },
    },
    ...(fifo
      ? {
          MessageGroupId: item.message.Attributes?.MessageGroupId ?? 'ferry-dead-letter',
          MessageDeduplicationId: item.message.MessageId,
        }
      : {}),
  }));
  try {
    const output = await connection.client.send(
      new SendMessageBatchCommand({ QueueUrl: deadLetterQueueUrl, Entries: entries }),
    );
    for (const failed of output.Failed ?? []) {
      onFailure(new Error(`dead-letter entry ${failed.Id} was not sent: ${failed.Code}: ${failed.Message}`));
    }
    const sent = new Set((output.Successful ?? []).map((entry) => entry.Id));
    return items.filter((_, index) => sent.has(`d${index}`));
  } catch (error) {
    onFailure(error);
    return [];
  }
}

function copiedAttributes(attributes: Attributes): Attributes {
  const ferryFirst = Object.keys(attributes)
    .filter((name) => name !== FERRY_HEADERS.rejectReason && name !== REJECT_DETAIL_ATTRIBUTE)
    .sort((a, b) => Number(!a.startsWith('x-ferry-')) - Number(!b.startsWith('x-ferry-')));
  const copied: Attributes = {};
  for (const name of ferryFirst.slice(0, MAX_COPIED_ATTRIBUTES)) copied[name] = attributes[name]!;
  return copied;
}
