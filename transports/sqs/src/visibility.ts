import { ChangeMessageVisibilityBatchCommand, type Message } from '@aws-sdk/client-sqs';
import type { SqsConnection } from './connection';

export interface VisibilityChange {
  readonly message: Message;
  readonly seconds: number;
}

/**
 * Sets the visibility timeout of each message (at most 10, one batch). Resolves to the
 * number of messages changed; entries in `Failed` (typically a receipt handle gone stale
 * because the message was received again elsewhere) are reported through `onFailure`.
 */
export async function changeVisibility(
  connection: SqsConnection,
  queueUrl: string,
  changes: readonly VisibilityChange[],
  onFailure: (error: unknown) => void,
): Promise<number> {
  if (changes.length === 0) return 0;
  try {
    const output = await connection.client.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: queueUrl,
        Entries: changes.map((change, index) => ({
          Id: `v${index}`,
          ReceiptHandle: change.message.ReceiptHandle,
          VisibilityTimeout: change.seconds,
        })),
      }),
    );
    for (const failed of output.Failed ?? []) {
      onFailure(
        new Error(`ChangeMessageVisibility entry ${failed.Id} failed: ${failed.Code}: ${failed.Message}`),
      );
    }
    return output.Successful?.length ?? 0;
  } catch (error) {
    onFailure(error);
    return 0;
  }
}

/**
 * Keeps a batch invisible while it is being accepted: every `everyMs` it renews the
 * visibility timeout to `seconds`, so a slow database never lets another consumer receive
 * the batch. stop() cancels the timer and waits for a renewal in flight.
 */
export class VisibilityExtender {
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly renew: () => Promise<unknown>,
    everyMs: number,
  ) {
    this.timer = setInterval(() => {
      this.inFlight = this.inFlight.then(this.renew, this.renew);
    }, everyMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.inFlight.catch(() => undefined);
  }
}
