import type { ConfirmChannel, Message, Options } from 'amqplib';
import {
  FERRY_HEADERS,
  abortableDelay,
  backoffDelay,
  type BackoffPolicy,
  type InboxAcceptInput,
  type InboxAcceptResult,
  type InboxAcceptor,
  type Logger,
} from '@ferry/core';
import { publishWithConfirm } from './confirm';
import { decodeDelivery, transportAttempts, type DecodeOptions } from './delivery';
import { REJECT_REASONS, describeError, type RejectReason } from './errors';
import type { WorkQueueNames } from './topology';

type PublishOptions = Options.Publish;

/** A delivery and the channel it arrived on (the only channel that can ack it). */
export interface Entry {
  readonly message: Message;
  readonly channel: ConfirmChannel;
}

/** Buffers deliveries; those that arrive while a batch is being settled form the next batch. */
export class DeliveryBuffer {
  private readonly entries: Entry[] = [];
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly maxBatchSize: number,
    private readonly settle: (batch: readonly Entry[]) => Promise<void>,
  ) {}

  push(entry: Entry): void {
    this.entries.push(entry);
    if (!this.flushing) this.flushing = this.flushLoop();
  }

  /** Deliveries buffered from a closed channel cannot be acked any more; the broker redelivers them. */
  dropChannel(channel: ConfirmChannel): void {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      if (this.entries[i]!.channel === channel) this.entries.splice(i, 1);
    }
  }

  /** Settles when the batch in flight and everything buffered behind it are settled. */
  drained(): Promise<void> {
    return this.flushing ?? Promise.resolve();
  }

  private async flushLoop(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      while (this.entries.length > 0) {
        const batch = this.entries.splice(0, this.maxBatchSize);
        await this.settle(batch);
      }
    } finally {
      this.flushing = null;
    }
  }
}

export interface SettlerOptions {
  readonly inbox: InboxAcceptor;
  readonly names: WorkQueueNames;
  readonly decode: DecodeOptions;
  readonly maxTransportRetries: number;
  readonly retryBackoff: BackoffPolicy;
  /** Random source for retry jitter; Math.random when undefined. */
  readonly random: (() => number) | undefined;
  /** Deadline for the broker to confirm a copy sent to the retry or dead-letter exchange. */
  readonly confirmTimeoutMs: number;
  /** Aborts when the consumer closes. */
  readonly closing: AbortSignal;
  readonly logger: Logger;
}

/**
 * The ack bookkeeping of a batch: a delivery is acked only after the inbox committed its
 * acceptance (or reported a duplicate); invalid ones are copied to the dead-letter exchange,
 * those whose acceptance failed to the retry exchange, and acked once the copy is confirmed.
 */
export class DeliverySettler {
  constructor(private readonly o: SettlerOptions) {}

  /** Decodes, accepts and settles one batch: every delivery ends acked, nacked or sent round again. */
  async settle(batch: readonly Entry[]): Promise<void> {
    const valid: { entry: Entry; input: InboxAcceptInput }[] = [];
    const settled: Promise<void>[] = [];
    for (const entry of batch) {
      const decoded = decodeDelivery(entry.message, this.o.decode);
      if (decoded.ok) valid.push({ entry, input: decoded.input });
      else settled.push(this.deadLetter(entry, decoded.reason, decoded.detail));
    }
    if (valid.length > 0) settled.push(this.acceptAndAck(valid));
    await Promise.all(settled);
  }

  private async acceptAndAck(valid: readonly { entry: Entry; input: InboxAcceptInput }[]): Promise<void> {
    let results: readonly InboxAcceptResult[];
    try {
      results = await this.o.inbox.acceptMany(valid.map((v) => v.input));
      if (results.length !== valid.length) {
        throw new Error(`acceptMany returned ${results.length} results for ${valid.length} inputs`);
      }
    } catch (error) {
      this.o.logger.warn(
        { err: error, queue: this.o.names.queue, count: valid.length },
        'ferry.rabbitmq: acceptance failed; deliveries go through the retry queue',
      );
      await Promise.all(valid.map((v) => this.retryLater(v.entry, describeError(error))));
      return;
    }
    await Promise.all(
      valid.map(({ entry }, i) => {
        const result = results[i]!;
        if (result.kind === 'accepted' || result.kind === 'duplicate') {
          ack(entry);
          return undefined;
        }
        if (result.kind === 'conflict') {
          return this.deadLetter(entry, REJECT_REASONS.fingerprintConflict, result.reason);
        }
        return this.deadLetter(entry, REJECT_REASONS.inboxInvalid, `${result.code}: ${result.reason}`);
      }),
    );
  }

  /** Copies the delivery to the dead-letter exchange with the reason, then acks it. */
  private async deadLetter(entry: Entry, reason: RejectReason, detail: string): Promise<void> {
    const { message } = entry;
    this.o.logger.warn(
      { queue: this.o.names.queue, reason, detail, messageId: message.properties.messageId },
      `ferry.rabbitmq: dead-lettering a delivery (${reason})`,
    );
    const copied = await this.copyTo(entry, this.o.names.deadLetterExchange, {
      [FERRY_HEADERS.rejectReason]: reason,
      'x-ferry-reject-detail': detail.slice(0, 1_000),
    });
    if (copied) ack(entry);
    else nack(entry, false);
  }

  /** Sends the delivery round the retry queue (TTL = backoff), or dead-letters it after the limit. */
  private async retryLater(entry: Entry, error: string): Promise<void> {
    const attempts = transportAttempts(entry.message);
    if (attempts >= this.o.maxTransportRetries) {
      await this.deadLetter(
        entry,
        REJECT_REASONS.retriesExhausted,
        `after ${attempts} transport retries: ${error}`,
      );
      return;
    }
    const delay = backoffDelay(attempts + 1, this.o.retryBackoff, this.o.random);
    const copied = await this.copyTo(
      entry,
      this.o.names.retryExchange,
      { [FERRY_HEADERS.transportAttempts]: String(attempts + 1) },
      String(delay),
    );
    if (copied) {
      ack(entry);
      return;
    }
    // The retry copy was not confirmed: keep the delivery and requeue it after the backoff.
    await abortableDelay(Math.max(delay, 1), this.o.closing).catch(() => undefined);
    nack(entry, true);
  }

  private async copyTo(
    entry: Entry,
    exchange: string,
    extraHeaders: Record<string, string>,
    expiration?: string,
  ): Promise<boolean> {
    const { message, channel } = entry;
    const { 'x-death': _death, ...headers } = message.properties.headers ?? {};
    const p = message.properties;
    const options: PublishOptions = {
      persistent: true,
      headers: { ...headers, ...extraHeaders },
      ...(p.contentType !== undefined ? { contentType: p.contentType } : {}),
      ...(p.contentEncoding !== undefined ? { contentEncoding: p.contentEncoding } : {}),
      ...(p.messageId !== undefined ? { messageId: p.messageId } : {}),
      ...(p.correlationId !== undefined ? { correlationId: p.correlationId } : {}),
      ...(p.type !== undefined ? { type: p.type } : {}),
      ...(p.timestamp !== undefined ? { timestamp: p.timestamp } : {}),
      ...(p.appId !== undefined ? { appId: p.appId } : {}),
      ...(expiration !== undefined ? { expiration } : {}),
    };
    const signal = AbortSignal.any([this.o.closing, AbortSignal.timeout(this.o.confirmTimeoutMs)]);
    const result = await publishWithConfirm(
      channel,
      exchange,
      message.fields.routingKey,
      message.content,
      options,
      signal,
    );
    return result.status === 'confirmed';
  }
}

/** Acks on the delivery's own channel; a closed channel means the broker will redeliver. */
function ack(entry: Entry): void {
  try {
    entry.channel.ack(entry.message);
  } catch {
    // The channel is gone; the delivery comes back and the inbox absorbs the duplicate.
  }
}

function nack(entry: Entry, requeue: boolean): void {
  try {
    entry.channel.nack(entry.message, false, requeue);
  } catch {
    // As for ack: the broker redelivers what a closed channel left unacknowledged.
  }
}
