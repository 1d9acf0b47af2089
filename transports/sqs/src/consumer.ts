import { ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import {
  abortableDelay,
  backoffDelay,
  safeEmit,
  type InboxAcceptInput,
  type InboxAcceptResult,
  type InboxAcceptor,
} from '@ferry/core';
import { visibilityBackoffSeconds } from './backoff';
import type { SqsConnection } from './connection';
import { sendToDeadLetterQueue, type DeadLetterItem } from './deadLetter';
import { deleteMessages } from './deleteBatch';
import { REJECT_REASONS, closedError, isAbortError } from './errors';
import {
  resolveConsumerOptions,
  type ConsumerOptions,
  type ResolvedConsumerOptions,
  type SqsConsumerEvent,
} from './options';
import { VisibilityExtender, changeVisibility } from './visibility';
import { decodeMessage, identityFromMessageId } from './wire';

export interface AttachConsumerOptions extends ConsumerOptions {
  readonly connection: SqsConnection;
}

export interface SqsConsumer {
  /** Resolves once the queue URL is known and the first long poll is issued. */
  ready(): Promise<void>;
  /** Aborts the long poll, lets a batch in acceptance finish (accept, delete), then stops. Safe twice. */
  close(): Promise<void>;
}

/**
 * Feeds an SQS queue into the inbox. Per received batch (long poll, up to 10 messages):
 * invalid messages are dead-lettered; the rest go to one `acceptMany` while their
 * visibility is renewed; accepted and duplicate ones are deleted after it resolved; when
 * acceptance as a whole failed, none is deleted and each gets a visibility timeout of the
 * retry backoff, so it comes back later.
 */
export function attachSqsConsumer(acceptor: InboxAcceptor, options: AttachConsumerOptions): SqsConsumer {
  const consumer = new PollingConsumer(acceptor, options.connection, resolveConsumerOptions(options));
  consumer.start();
  return consumer;
}

class PollingConsumer implements SqsConsumer {
  private readonly stop = new AbortController();
  private loop: Promise<void> = Promise.resolve();
  private queueUrl = '';
  private readonly readyPromise: Promise<void>;
  private markReady: () => void = () => undefined;
  private failReady: (error: unknown) => void = () => undefined;

  constructor(
    private readonly acceptor: InboxAcceptor,
    private readonly connection: SqsConnection,
    private readonly options: ResolvedConsumerOptions,
  ) {
    this.readyPromise = new Promise((resolve, reject) => {
      this.markReady = resolve;
      this.failReady = reject;
    });
    this.readyPromise.catch(() => undefined);
  }

  start(): void {
    this.loop = this.run().catch((error: unknown) => this.emit({ kind: 'error', error }));
  }

  ready(): Promise<void> {
    return this.readyPromise;
  }

  async close(): Promise<void> {
    if (!this.stop.signal.aborted) this.stop.abort(closedError('SQS consumer'));
    this.failReady(closedError('SQS consumer'));
    await this.loop;
  }

  private async run(): Promise<void> {
    const signal = this.stop.signal;
    let failures = 0;
    while (!signal.aborted) {
      let messages: Message[];
      try {
        this.queueUrl ||= await this.connection.queueUrl(this.options.queueUrl, signal);
        const receiving = this.receive(signal);
        this.markReady();
        messages = await receiving;
        failures = 0;
      } catch (error) {
        if (signal.aborted || isAbortError(error)) break;
        this.emit({ kind: 'error', error });
        failures += 1;
        const delay = backoffDelay(failures, this.options.pollErrorBackoff, this.options.random);
        await abortableDelay(delay, signal).catch(() => undefined);
        continue;
      }
      this.emit({ kind: 'polled', count: messages.length });
      if (messages.length === 0) continue;
      this.emit({ kind: 'received', count: messages.length });
      await this.handleBatch(messages);
    }
  }

  private async receive(signal: AbortSignal): Promise<Message[]> {
    const output = await this.connection.client.send(
      new ReceiveMessageCommand({
        QueueUrl: this.queueUrl,
        MaxNumberOfMessages: this.options.maxMessages,
        WaitTimeSeconds: this.options.waitTimeSeconds,
        VisibilityTimeout: this.options.visibilityTimeoutSeconds,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['ApproximateReceiveCount', 'MessageGroupId'],
      }),
      { abortSignal: signal },
    );
    return output.Messages ?? [];
  }

  /** One received batch, start to end; not interrupted by close(). */
  private async handleBatch(messages: readonly Message[]): Promise<void> {
    const identity = this.options.identity ?? identityFromMessageId;
    const toDelete: Message[] = [];
    const invalid: DeadLetterItem[] = [];
    const valid: { message: Message; input: InboxAcceptInput }[] = [];
    for (const message of messages) {
      const decoded = decodeMessage(message, {
        consumer: this.options.consumer,
        maxPayloadBytes: this.acceptor.maxPayloadBytes,
        identity,
      });
      if (decoded.ok) valid.push({ message, input: decoded.input });
      else
        invalid.push({
          message,
          messageId: decoded.messageId,
          reason: decoded.reason,
          detail: decoded.detail,
        });
    }
    if (valid.length > 0) {
      const results = await this.accept(
        valid.map((v) => v.message),
        valid.map((v) => v.input),
      );
      results?.forEach((result, index) => {
        const { message, input } = valid[index]!;
        if (result.kind === 'accepted' || result.kind === 'duplicate') toDelete.push(message);
        else if (result.kind === 'invalid') {
          invalid.push({
            message,
            messageId: input.messageId,
            reason: REJECT_REASONS.inboxInvalid,
            detail: `${result.code}: ${result.reason}`,
          });
        } else {
          invalid.push({
            message,
            messageId: input.messageId,
            reason: REJECT_REASONS.fingerprintConflict,
            detail: result.reason,
          });
        }
      });
    }
    toDelete.push(...(await this.deadLetter(invalid)));
    const deleted = await deleteMessages(
      this.connection,
      this.queueUrl,
      toDelete,
      this.options.deleteAttempts,
      this.onFailure,
    );
    if (deleted > 0) this.emit({ kind: 'deleted', count: deleted });
  }

  /** acceptMany under a visibility extender; null (and a visibility backoff) when it failed. */
  private async accept(
    messages: readonly Message[],
    inputs: readonly InboxAcceptInput[],
  ): Promise<readonly InboxAcceptResult[] | null> {
    const seconds = this.options.visibilityTimeoutSeconds;
    const extender = new VisibilityExtender(async () => {
      const changes = messages.map((message) => ({ message, seconds }));
      const count = await changeVisibility(this.connection, this.queueUrl, changes, this.onFailure);
      if (count > 0) this.emit({ kind: 'visibility_extended', count });
    }, this.options.extendEveryMs);
    let results: readonly InboxAcceptResult[];
    try {
      results = await this.acceptor.acceptMany(inputs);
    } catch (error) {
      await extender.stop();
      await this.backOff(messages, error);
      return null;
    }
    await extender.stop();
    if (results.length !== inputs.length) {
      await this.backOff(
        messages,
        new Error(`acceptMany returned ${results.length} results for ${inputs.length} inputs`),
      );
      return null;
    }
    this.emit({ kind: 'accepted', messageIds: inputs.map((input) => input.messageId) });
    return results;
  }

  /** Not deleted: each message becomes visible again after the backoff of its receive count. */
  private async backOff(messages: readonly Message[], error: unknown): Promise<void> {
    const changes = messages.map((message) => ({ message, seconds: this.retrySeconds(message) }));
    await changeVisibility(this.connection, this.queueUrl, changes, this.onFailure);
    this.emit({
      kind: 'acceptance_failed',
      error,
      visibilitySeconds: Math.max(...changes.map((c) => c.seconds)),
    });
  }

  /** Queue mode: copies to the dead-letter queue, returned for deletion. Redrive mode: left to the policy. */
  private async deadLetter(items: readonly DeadLetterItem[]): Promise<Message[]> {
    if (items.length === 0) return [];
    const deadLetter = this.options.deadLetter;
    if (deadLetter.mode === 'redrive') {
      const changes = items.map((item) => ({
        message: item.message,
        seconds: this.retrySeconds(item.message),
      }));
      await changeVisibility(this.connection, this.queueUrl, changes, this.onFailure);
      return [];
    }
    const sent = await sendToDeadLetterQueue(this.connection, deadLetter.queueUrl, items, this.onFailure);
    for (const item of sent)
      this.emit({ kind: 'dead_lettered', messageId: item.messageId, reason: item.reason });
    return sent.map((item) => item.message);
  }

  private retrySeconds(message: Message): number {
    const receiveCount = Number(message.Attributes?.ApproximateReceiveCount ?? 1);
    return visibilityBackoffSeconds(receiveCount, this.options.retryBackoff, this.options.random);
  }

  private readonly onFailure = (error: unknown): void => this.emit({ kind: 'error', error });

  private emit(event: SqsConsumerEvent): void {
    safeEmit(this.options.observer, event, this.options.logger);
  }
}
