import { DeleteMessageBatchCommand, type Message } from '@aws-sdk/client-sqs';
import type { SqsConnection } from './connection';
import { isRefusedRequestError } from './errors';

/** Entry codes after which deleting the same receipt handle again cannot succeed. */
const FINAL_DELETE_CODES = new Set(['ReceiptHandleIsInvalid', 'InvalidParameterValue']);

/**
 * Deletes messages (at most 10) with DeleteMessageBatch, checking every entry of `Failed`
 * and retrying those up to `attempts` times in all. Resolves to the messages deleted. A
 * message that could not be deleted becomes visible again and is offered once more; the
 * inbox reports it as a duplicate, and it is deleted then. `signal` is the deadline of all
 * attempts together: once it aborted (SQS did not answer) no attempt follows.
 */
export async function deleteMessages(
  connection: SqsConnection,
  queueUrl: string,
  messages: readonly Message[],
  attempts: number,
  onFailure: (error: unknown) => void,
  signal: AbortSignal,
): Promise<Message[]> {
  let remaining = [...messages];
  const deleted: Message[] = [];
  for (let attempt = 1; attempt <= attempts && remaining.length > 0; attempt += 1) {
    try {
      const entries = remaining.map((message, index) => ({
        Id: `x${index}`,
        ReceiptHandle: message.ReceiptHandle,
      }));
      const output = await connection.request(
        (sqs, abortSignal) =>
          sqs.send(new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }), { abortSignal }),
        signal,
      );
      for (const entry of output.Successful ?? []) {
        const message = remaining[Number(entry.Id?.slice(1))];
        if (message) deleted.push(message);
      }
      const retry: Message[] = [];
      for (const failed of output.Failed ?? []) {
        const message = remaining[Number(failed.Id?.slice(1))];
        const error = new Error(`DeleteMessageBatch entry failed: ${failed.Code}: ${failed.Message}`);
        if (!message || FINAL_DELETE_CODES.has(failed.Code ?? '') || attempt === attempts) onFailure(error);
        else retry.push(message);
      }
      remaining = retry;
    } catch (error) {
      // Refused credentials are not retried: the next attempt would be refused too.
      if (attempt === attempts || signal.aborted || isRefusedRequestError(error)) {
        onFailure(error);
        break;
      }
    }
  }
  return deleted;
}
