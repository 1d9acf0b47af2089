import { ChangeMessageVisibilityBatchCommand, type Message } from '@aws-sdk/client-sqs';
import type { SqsConnection } from './connection';
import { onAbort } from '@ferry/core/transport';
import { requestDeadline } from './deadline';

export interface VisibilityChange {
  readonly message: Message;
  readonly seconds: number;
}

/**
 * Sets the visibility timeout of each message (at most 10, one batch). Resolves to the
 * number of messages changed; entries in `Failed` (typically a receipt handle gone stale
 * because the message was received again elsewhere) are reported through `onFailure`, and so
 * is a request that `signal` (its deadline) aborted: SQS did not answer in time. A change that
 * did not land leaves the message's visibility as it was: it comes back when that runs out.
 */
export async function changeVisibility(
  connection: SqsConnection,
  queueUrl: string,
  changes: readonly VisibilityChange[],
  onFailure: (error: unknown) => void,
  signal: AbortSignal,
): Promise<number> {
  if (changes.length === 0) return 0;
  try {
    const entries = changes.map((change, index) => ({
      Id: `v${index}`,
      ReceiptHandle: change.message.ReceiptHandle,
      VisibilityTimeout: change.seconds,
    }));
    const output = await connection.request(
      (sqs, abortSignal) =>
        sqs.send(new ChangeMessageVisibilityBatchCommand({ QueueUrl: queueUrl, Entries: entries }), {
          abortSignal,
        }),
      signal,
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
 * visibility timeout, so a slow database never lets another consumer receive the batch. A
 * renewal gets `everyMs` to answer (its signal then aborts) and a tick while one is in flight
 * is skipped, so an SQS that stops answering neither piles renewals up nor holds stop() for
 * longer than that. stop() cancels the timer and waits for a renewal in flight. `abandon` (a
 * close() past its closeTimeoutMs) stops it too, and aborts the renewal in flight.
 */
export class VisibilityExtender {
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<unknown> | null = null;
  private readonly unlisten: () => void;

  constructor(
    private readonly renew: (signal: AbortSignal) => Promise<unknown>,
    everyMs: number,
    private readonly abandon: AbortSignal,
  ) {
    this.unlisten = abandon.aborted ? () => undefined : onAbort(abandon, () => this.clear());
    if (abandon.aborted) return;
    this.timer = setInterval(() => {
      if (this.inFlight) return;
      this.inFlight = this.renew(requestDeadline(everyMs, this.abandon))
        .catch(() => undefined)
        .finally(() => {
          this.inFlight = null;
        });
    }, everyMs);
  }

  async stop(): Promise<void> {
    this.unlisten();
    this.clear();
    await this.inFlight;
  }

  /**
   * Waits for the renewal in flight, if any (it never rejects, and ends within its `everyMs`
   * deadline). A message taken out of what `renew` renews may still be named by it: its delete
   * or visibility change waits for this first, else the renewal could land after it (review 137:
   * a renewal after a delete is a `ReceiptHandleIsInvalid` failure, one after a retry backoff's
   * visibility change undoes the backoff).
   */
  async idle(): Promise<void> {
    await this.inFlight;
  }

  private clear(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
