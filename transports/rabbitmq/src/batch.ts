import type { ConfirmChannel } from 'amqplib';
import {
  FERRY_HEADERS,
  type InboxAcceptInput,
  type InboxAcceptResult,
  type InboxAcceptor,
  type Logger,
} from '@ferry/core';
import {
  abortableDelay,
  acceptHolding,
  backoffDelay,
  clearableAny,
  deadLetterTenant,
  withoutOverruledTenant,
  deadlineSignal,
  describeCause,
  escapeUnshowable,
  eventLoopTurns,
  invalidResultReason,
  reportedMessageId,
  retriesExhaustedDetail,
  type BackoffPolicy,
  type ConsumerEmit,
  type TransportConsumerEvent,
  type TransportObserver,
} from '@ferry/core/transport';
import { ChannelAcks, type Delivery } from './acks';
import { UNREAD_BODY_HEADER, unreadBody } from './bodyGuard';
import { publishWithConfirm, type ConfirmResult } from './confirm';
import type { CopyChannel } from './copyChannel';
import { copyOptions, DROPPED_HEADERS, shortString } from './copyOptions';
import { negotiatedFrameMax } from './headerTable';
import { deadLetterIdentityHeader, decodeDelivery, type DecodeOptions } from './delivery';
import { REJECT_REASONS, type RejectReason } from './errors';
import { deliveredAs, ORIGIN_HEADERS, tierFor, tierQueueName, trustedTransportAttempts } from './retryTiers';
import type { WorkQueueNames } from './topology';

/** The delivery's routing key for its dead-letter copy, or '' when amqplib could not encode it (shortString). */
function copyRoutingKey(message: Entry['message']): string {
  return shortString(message.fields.routingKey) ?? '';
}

/** A delivery and the channel it arrived on (the only channel that can ack it). */
export type Entry = Delivery<ConfirmChannel>;

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
  /** The channel dead-letter and retry copies are published on (not the consuming channel). */
  readonly copies: CopyChannel;
  /** The consumer's observer: acceptHolding reports an outage to it. */
  readonly observer: TransportObserver<TransportConsumerEvent> | undefined;
  /** The same observer, with transport and source filled in. */
  readonly emit: ConsumerEmit;
  /**
   * The `user-id` retry copies are published with: the copies' connection's own user, which
   * RabbitMQ validates, so a delivery carrying it was published by ferry's connection (or another
   * of the same user), never by a producer connected as another (deliveredAs).
   */
  readonly copyUserId: string;
}

/** What one batch came to: deliveries acked, and how many of them the inbox accepted. */
interface Tally {
  accepted: number;
  settled: number;
}

/**
 * The ack bookkeeping of a batch: a delivery is acked only after the inbox committed its
 * acceptance (or reported a duplicate); invalid ones are copied to the dead-letter exchange,
 * those whose acceptance failed to a retry tier queue, and acked once the copy is confirmed.
 */
export class DeliverySettler {
  private readonly retryQueues: ReadonlySet<string>;
  private readonly acks = new ChannelAcks<ConfirmChannel>();
  private readonly lostChannels = new WeakSet<ConfirmChannel>();
  private readonly holds = new Set<{ channels: ReadonlySet<ConfirmChannel>; lost: AbortController }>();

  constructor(private readonly o: SettlerOptions) {
    this.retryQueues = new Set(o.names.retryQueues);
  }

  /** Registers a delivery as it arrives, before it is buffered (see ChannelAcks). */
  received(entry: Entry): void {
    this.acks.received(entry);
  }

  /** The channel closed: a batch held on it is released, its deliveries are redelivered anyway. */
  channelClosed(channel: ConfirmChannel): void {
    this.acks.forget(channel);
    this.lostChannels.add(channel);
    for (const hold of this.holds) {
      if (hold.channels.has(channel)) hold.lost.abort(new Error('channel closed'));
    }
  }

  /** A signal that aborts on close() or once a channel of `entries` is lost; done() forgets it. */
  private hold(entries: readonly Entry[]): { signal: AbortSignal; done: () => void } {
    const hold = { channels: new Set(entries.map((e) => e.channel)), lost: new AbortController() };
    if ([...hold.channels].some((c) => this.lostChannels.has(c)))
      hold.lost.abort(new Error('channel closed'));
    this.holds.add(hold);
    // Not AbortSignal.any: Node 20 kept every batch's signal in the closing one (review 99).
    const stop = clearableAny([this.o.closing, hold.lost.signal]);
    return {
      signal: stop.signal,
      done: () => {
        stop.clear();
        this.holds.delete(hold);
      },
    };
  }

  /**
   * Decodes, accepts and settles one batch: every delivery ends acked, nacked or sent round
   * again. Reports `received`, then `accepted` and `settled` (acks sent) once it is done. After
   * close() a batch is nacked with requeue instead, unreported.
   */
  async settle(batch: readonly Entry[]): Promise<void> {
    // Buffered behind the batch in flight when close() came: back to the queue untouched (nack,
    // requeue), as a held batch is; offering it would cost close() one more acceptance attempt
    // per batch, each as slow as the database, during an outage.
    if (this.o.closing.aborted) {
      for (const entry of batch) this.acks.nack(entry, true);
      return;
    }
    this.o.emit({ type: 'received', count: batch.length });
    const tally: Tally = { accepted: 0, settled: 0 };
    const valid: { entry: Entry; input: InboxAcceptInput }[] = [];
    const settled: Promise<void>[] = [];
    // A body within 6 × maxPayloadBytes is parsed before it is measured: a batch of them gives
    // the event loop its turns (amqplib's heartbeats) while it is decoded.
    const turns = eventLoopTurns();
    for (const entry of batch) {
      await turns();
      const decoded = decodeDelivery(
        deliveredAs(entry.message, this.retryQueues, this.o.copyUserId),
        this.o.decode,
        unreadBody(entry.message),
      );
      if (decoded.ok) valid.push({ entry, input: decoded.input });
      else settled.push(this.deadLetter(entry, decoded, tally));
    }
    if (valid.length > 0) settled.push(this.acceptAndAck(valid, tally));
    await Promise.all(settled);
    this.report(tally);
  }

  /** Reports `accepted` and `settled` (acks sent) for what `tally` counted. */
  private report(tally: Tally): void {
    if (tally.accepted > 0) this.o.emit({ type: 'accepted', count: tally.accepted });
    if (tally.settled > 0) this.o.emit({ type: 'settled', count: tally.settled });
  }

  /**
   * One acceptMany for the batch, isolated (acceptIsolated): an input that fails alone is
   * dead-lettered with its reason and its neighbours are acked. A batch-wide failure (database
   * unavailable, pool exhausted, timeout, closed) is an outage, not the deliveries' fault: the
   * batch is held unacked and accepted again after the retry backoff until it goes through
   * (acceptHolding), spending no transport retry; prefetch stops further deliveries meanwhile.
   * At the admission limit the deliveries the inbox answered anyway (duplicates, invalid) are
   * acked or dead-lettered at once and only the refused ones are held the same way. close() or
   * the loss of a batch's channel releases what is still held (nack, requeue). Only the
   * retriable safety net of acceptIsolated sends the batch round the retry tiers.
   */
  private async acceptAndAck(
    valid: readonly { entry: Entry; input: InboxAcceptInput }[],
    tally: Tally,
  ): Promise<void> {
    const held = this.hold(valid.map((v) => v.entry));
    try {
      const outcome = await acceptHolding(
        valid.map((v) => v.input),
        (inputs) => this.o.inbox.acceptMany(inputs),
        {
          backoff: this.o.retryBackoff,
          random: this.o.random,
          signal: held.signal,
          transport: 'rabbitmq',
          source: this.o.names.queue,
          observer: this.o.observer,
          logger: this.o.logger,
        },
        async (answered) => {
          // Reported as each part is settled: at the admission limit, before the refused are.
          const part: Tally = { accepted: 0, settled: 0 };
          await this.settleAnswered(
            answered.map(({ index, result }) => ({ ...valid[index]!, result })),
            part,
          );
          this.report(part);
        },
      );
      if (outcome.kind === 'released') {
        for (const index of outcome.pending) this.acks.nack(valid[index]!.entry, true);
      } else if (outcome.kind === 'failed') {
        // Only the failed offer goes round the retry tiers; the rest, not offered since the
        // window shrank, did not fail: released (requeued), no transport retry spent.
        for (const index of outcome.notOffered) this.acks.nack(valid[index]!.entry, true);
        const failed = outcome.offered.map((index) => valid[index]!);
        await this.retryBatch(failed, outcome.error, tally);
      }
    } finally {
      held.done();
    }
  }

  /**
   * Acks the accepted and duplicate deliveries (together: one frame for a run of them, see
   * ChannelAcks), dead-letters the rejected ones.
   */
  private async settleAnswered(
    answered: readonly { entry: Entry; input: InboxAcceptInput; result: InboxAcceptResult }[],
    tally: Tally,
  ): Promise<void> {
    const stored: Entry[] = [];
    const rejected: Promise<void>[] = [];
    for (const { entry, input, result } of answered) {
      if (result.kind === 'accepted' || result.kind === 'duplicate') {
        stored.push(entry);
        continue;
      }
      const reason =
        result.kind === 'conflict'
          ? { reason: REJECT_REASONS.fingerprintConflict, detail: result.reason }
          : { reason: invalidResultReason(result), detail: `${result.code}: ${result.reason}` };
      rejected.push(this.deadLetter(entry, { ...inputIdentity(input), ...reason }, tally));
    }
    const acked = this.acks.ack(stored).length;
    tally.accepted += acked;
    tally.settled += acked;
    await Promise.all(rejected);
  }

  /** The retriable safety net of acceptIsolated: the batch goes round the retry tiers. */
  private async retryBatch(
    valid: readonly { entry: Entry; input: InboxAcceptInput }[],
    error: unknown,
    tally: Tally,
  ): Promise<void> {
    const cause = describeCause(error);
    this.o.logger.warn(
      { err: error, queue: this.o.names.queue, count: valid.length },
      `ferry.rabbitmq: acceptance of the whole batch failed (${cause}); deliveries go round the retry queues`,
    );
    const delays = await Promise.all(
      valid.map(({ entry, input }) => this.retryLater(entry, inputIdentity(input), cause, tally)),
    );
    const retried = delays.filter((delay): delay is number => delay !== null);
    if (retried.length > 0) {
      this.o.emit({
        type: 'acceptance-failed',
        count: retried.length,
        error: cause,
        delayMs: Math.max(...retried),
      });
    }
  }

  /**
   * Copies the delivery to the dead-letter exchange with the reason, then acks it. A copy the
   * broker did not take (returned: no queue bound to take it; not confirmed: a dead-letter queue
   * full with reject-publish, an exchange deleted meanwhile, no confirm in time) is reported as
   * an `error`, and the delivery stays unacked for the first retry backoff, then is requeued: it
   * stays in the work queue until its copy can be made (below a quorum queue's x-delivery-limit, see
   * the README's known limits). It is never rejected to the queue's own
   * dead-letter exchange instead: that one routes to the same queue, and the broker drops what
   * a full queue refuses (the message was lost).
   */
  private async deadLetter(
    entry: Entry,
    rejected: RejectedIdentity & { readonly reason: RejectReason; readonly detail: string },
    tally: Tally,
  ): Promise<void> {
    const message = deliveredAs(entry.message, this.retryQueues, this.o.copyUserId);
    const { messageId, reason, detail } = rejected;
    const unread = unreadBody(entry.message);
    const tenant = deadLetterTenant(this.o.decode.tenant, rejected.tenantId);
    this.o.logger.warn(
      {
        queue: this.o.names.queue,
        reason,
        detail: escapeUnshowable(detail.slice(0, 1_000)),
        messageId: reportedMessageId(messageId),
      },
      `ferry.rabbitmq: dead-lettering a delivery (${reason})`,
    );
    const ferry = {
      ...deadLetterIdentityHeader(message, messageId),
      ...(typeof tenant === 'string' ? { [FERRY_HEADERS.tenantId]: tenant } : {}),
      [FERRY_HEADERS.rejectReason]: reason,
      'x-ferry-reject-detail': detail.slice(0, 1_000),
      ...(unread === undefined ? {} : { [UNREAD_BODY_HEADER]: String(unread.bytes) }),
    };
    // A tenant header the tenant function overruled (global scope) is not copied (review 97), nor
    // a producer's own UNREAD_BODY_HEADER (the copy of a body that was read does not say otherwise).
    const { properties } = entry.message;
    const { [UNREAD_BODY_HEADER]: _claimed, ...headers } = withoutOverruledTenant(
      properties.headers ?? {},
      tenant,
    );
    const own = { ...properties, headers };
    const options = copyOptions(own, ferry, negotiatedFrameMax(entry.channel), this.o.copyUserId);
    const copied = await this.copyTo(
      entry,
      this.o.names.deadLetterExchange,
      copyRoutingKey(message),
      ferry,
      options,
    );
    if (copied.status !== 'confirmed') {
      this.copyNotTaken('dead-letter', copied);
      await this.requeueAfter(entry, backoffDelay(1, this.o.retryBackoff, this.o.random));
      return;
    }
    if (this.ack(entry)) tally.settled += 1;
    this.o.emit({ type: 'dead-lettered', reason, messageId });
  }

  /** A copy the broker did not take: the delivery was not copied anywhere; logged and reported as `error`. */
  private copyNotTaken(
    copy: 'dead-letter' | 'retry',
    copied: Exclude<ConfirmResult, { status: 'confirmed' }>,
  ): void {
    const what = copied.status === 'returned' ? 'was returned by the broker' : 'was not confirmed';
    const message = `the ${copy} copy of a delivery ${what}, ${copied.error}; the delivery is requeued`;
    this.o.logger.error({ queue: this.o.names.queue }, `ferry.rabbitmq: ${message}`);
    this.o.emit({ type: 'error', error: message });
  }

  /** Keeps the delivery unacked for `delayMs` (or until close()), then requeues it. */
  private async requeueAfter(entry: Entry, delayMs: number): Promise<void> {
    await abortableDelay(Math.max(delayMs, 1), this.o.closing).catch(() => undefined);
    this.acks.nack(entry, true);
  }

  /**
   * Sends the delivery round the retry tier whose delay is the backoff rounded up (published
   * straight to the tier queue), or dead-letters it after the limit. Only a counter that came
   * back from a retry tier is trusted (trustedTransportAttempts). Resolves to the delay, or
   * null when the delivery was dead-lettered.
   */
  private async retryLater(
    entry: Entry,
    identity: RejectedIdentity,
    error: string,
    tally: Tally,
  ): Promise<number | null> {
    const attempts = trustedTransportAttempts(entry.message, this.retryQueues);
    if (attempts >= this.o.maxTransportRetries) {
      const detail = retriesExhaustedDetail(attempts, error);
      await this.deadLetter(entry, { ...identity, reason: REJECT_REASONS.retriesExhausted, detail }, tally);
      return null;
    }
    const delay = backoffDelay(attempts + 1, this.o.retryBackoff, this.o.random);
    const tier = tierFor(delay, this.o.names.retryTiersMs);
    const first = deliveredAs(entry.message, this.retryQueues, this.o.copyUserId);
    const { exchange, routingKey } = first.fields;
    const userId: unknown = first.properties.userId;
    const headers = {
      [FERRY_HEADERS.transportAttempts]: String(attempts + 1),
      [ORIGIN_HEADERS.exchange]: exchange,
      [ORIGIN_HEADERS.routingKey]: routingKey,
      // Always written ('' when the delivery had none), so a producer's own header of that name
      // never comes back as the origin (review 46).
      [ORIGIN_HEADERS.userId]: typeof userId === 'string' ? userId : '',
    };
    // The copy's user-id is always the copy connection's own: what deliveredAs trusts.
    const copy = {
      ...copyOptions(entry.message.properties, headers, negotiatedFrameMax(entry.channel)),
      userId: this.o.copyUserId,
    };
    if (copy.headers?.[DROPPED_HEADERS] !== undefined) {
      // A copy without some of the delivery's headers would not be the same message when it
      // comes back (a tenant or identity function reading one of them would read nothing), and
      // without a copy no trip is counted (requeued, it would come back for ever): the delivery is
      // dead-lettered now, with the reason, for an operator to requeue once acceptance works.
      const detail =
        `acceptance failed (${error}); a retry copy cannot carry all of its headers (a header table ` +
        `at the size amqplib can encode, with ferry's retry headers added), so it is not retried`;
      await this.deadLetter(entry, { ...identity, reason: REJECT_REASONS.headersTooLarge, detail }, tally);
      return null;
    }
    const copied = await this.copyTo(entry, '', tierQueueName(this.o.names.retryQueue, tier), headers, copy);
    if (copied.status === 'confirmed') {
      if (this.ack(entry)) tally.settled += 1;
      return tier;
    }
    // The retry copy was not confirmed, or no queue took it (a tier queue declared for another
    // retryBackoff): keep the delivery and requeue it after the backoff.
    this.copyNotTaken('retry', copied);
    await this.requeueAfter(entry, delay);
    return delay;
  }

  /** Acks one delivery on its own channel; false when the channel is gone (the broker redelivers it). */
  private ack(entry: Entry): boolean {
    return this.acks.ack([entry]).length === 1;
  }

  private async copyTo(
    entry: Entry,
    exchange: string,
    routingKey: string,
    extraHeaders: Record<string, string>,
    // Sized for the delivery's connection, the one the copy channel is opened on (same broker).
    options = copyOptions(
      entry.message.properties,
      extraHeaders,
      negotiatedFrameMax(entry.channel),
      this.o.copyUserId,
    ),
  ): Promise<ConfirmResult> {
    const { message } = entry;
    const signal = deadlineSignal(this.o.confirmTimeoutMs, this.o.closing);
    let channel: ConfirmChannel;
    try {
      channel = await this.o.copies.get(signal);
    } catch (error) {
      return { status: 'failed', error: `no channel for the copy: ${describeCause(error)}` };
    }
    // amqplib threw (it cannot encode the copy): nothing more may be published on that channel.
    const result = await publishWithConfirm(
      channel,
      exchange,
      routingKey,
      message.content,
      options,
      signal,
      () => this.o.copies.discard(channel),
    );
    // Unroutable: a queue of the topology deleted meanwhile is declared again for the next attempt.
    if (result.status === 'returned') await this.o.copies.redeclare(channel, signal);
    return result;
  }
}

/** What a dead-letter copy carries of the delivery's identity: its message id and resolved tenant. */
interface RejectedIdentity {
  readonly messageId: string | null;
  /** The tenant its source resolved (undefined: not resolved), for deadLetterTenant. */
  readonly tenantId?: string | null;
}

function inputIdentity(input: InboxAcceptInput): RejectedIdentity & { readonly messageId: string } {
  return { messageId: input.messageId, tenantId: input.tenantId };
}
