import type { ChannelModel, ConfirmChannel, Message } from 'amqplib';
import type { InboxAcceptor, Logger } from '@ferry/core';
import { FerryError } from '@ferry/core';
import {
  guardLogger,
  AttachAttempts,
  abortableDelay,
  awaitReady,
  checkAttachable,
  checkAttached,
  backoffDelay,
  consumerEmitter,
  deadlineSignal,
  describeCause,
  inRootContext,
  transportError,
  type ConsumerEmitter,
  type ReadyOptions,
} from '@ferry/core/transport';
import { DeliverySettler, type Entry } from './batch';
import { BodyGuard } from './bodyGuard';
import { DeliveryBuffer } from './buffer';
import { CopyChannel } from './copyChannel';
import { CLOSE_ANSWER_MS, untilAborted } from './waits';
import { settlesWithin } from '@ferry/core/transport';
import { RabbitConnection, amqplibTurn, openConfirmChannel, useConnection } from './connection';
import {
  resolveConsumerOptions,
  type RabbitConsumerOptions,
  type ResolvedConsumerOptions,
} from './consumerOptions';
import { StreamQueueError, isRefusal, unknownExchangeType } from './errors';
import { isStreamQueue } from './streamCheck';
import { declareWorkQueue, type WorkQueueNames } from './topology';

export interface RabbitConsumer {
  readonly names: WorkQueueNames;
  /**
   * The start-up gate: resolves once the consumer is attached for the first time (and stays
   * resolved, whatever becomes of the connection); FERRY_TIMEOUT after
   * `timeoutMs` (default 60,000) while the broker is unreachable (naming the last failure),
   * FERRY_CLOSED once closed (also at once when its shared connection was closed before it
   * attached), and FERRY_PERMANENT_FAILURE at once when the broker refuses the
   * consumer (403 ACCESS_REFUSED, 406 PRECONDITION_FAILED: e.g. an existing queue declared with
   * other arguments, 530 NOT_ALLOWED; a shared connection with no channel left for its two:
   * ChannelsExhaustedError), unless the refusal ends by itself (another consumer's
   * exclusive use, a limit reached: isRefusal), which is waited out like any failure. The
   * consumer keeps trying to attach after either.
   */
  ready(options?: ReadyOptions): Promise<void>;
  /**
   * The readiness probe: resolves while the consumer consumes its queue; rejects at once with
   * ConsumerDisconnectedError (FERRY_TRANSPORT_ERROR) naming the consumer, its queue and the last
   * failure while it does not (before it first attached, and from a lost connection or channel
   * until it re-attached), FERRY_CLOSED once closed.
   */
  check(): Promise<void>;
  /**
   * Stops consuming, lets the batches in flight finish (and be acked; those held through an
   * outage are requeued), closes. An attach in flight ends first, its channel closed: once close()
   * resolved no channel of the consumer is open, also on a shared connection. Safe twice;
   * concurrent calls share one promise.
   */
  close(): Promise<void>;
}

/**
 * Attaches an inbox to a RabbitMQ work queue with manual acks. A delivery is acked only after
 * the inbox committed its acceptance (or reported it a duplicate). Invalid deliveries and those
 * that exhausted their transport retries are copied to the dead-letter exchange with
 * `x-ferry-reject-reason`, then acked. While acceptance fails batch-wide (an outage) the batch
 * is held unacked and retried after the retry backoff, spending no transport retry; close()
 * requeues it. Deliveries whose acceptance failed otherwise (retriable) are copied to the
 * retry tier queue of their backoff (fixed queue TTL per tier), then acked. A copy is acked away only after the
 * broker confirmed it; if it is not, the delivery is left unacked for the backoff, then requeued
 * (its copy made again at its next delivery), never rejected to the queue's own dead-letter
 * exchange. See the README's known limits (bounded work queues, quorum delivery limits).
 */
export function attachRabbitConsumer(inbox: InboxAcceptor, options: RabbitConsumerOptions): RabbitConsumer {
  const { resolved } = checkAttachable(inbox, options, 'connection, queue and consumer', () => {
    const resolved = resolveConsumerOptions(options, inbox.maxPayloadBytes);
    return { resolved, consumer: resolved.decode.consumer };
  });
  const consumer = new ConsumerRuntime(inbox, resolved);
  consumer.start();
  return consumer;
}

class ConsumerRuntime implements RabbitConsumer {
  readonly names: WorkQueueNames;
  private readonly connection: RabbitConnection;
  private readonly ownsConnection: boolean;
  private readonly logger: Logger;
  private readonly emit: ConsumerEmitter;
  private readonly prefetch: number;
  private readonly closing = new AbortController();
  private readonly attempts = new AttachAttempts();
  private readonly buffer: DeliveryBuffer;
  private readonly settler: DeliverySettler;
  private readonly copies: CopyChannel;
  private readonly bodies: BodyGuard;
  private channel: ConfirmChannel | null = null;
  private consumerTag: string | null = null;
  private attaching: ChannelModel | null = null;
  /**
   * The channel of an attach attempt until its consume answered: closed before then, the attempt
   * fails and the attach loop reports it (one `disconnected`, with its real wait), not the close.
   */
  private opening: ConfirmChannel | null = null;
  /**
   * Deliveries of the attempt's channel that arrived before its queue was found to be no stream
   * (review 106): offered to the inbox only then, dropped with the channel otherwise.
   */
  private unchecked: { channel: ConfirmChannel; entries: Entry[] } | null = null;
  private unsubscribe: (() => void) | null = null;
  /** The consumer's work in flight (track()), which close() waits for. */
  private readonly inFlight = new Set<Promise<unknown>>();
  /** The connection whose close watchConnection() listens to, and its listener. */
  private watched: { model: ChannelModel; listener: (error: unknown) => void } | null = null;
  private channelError: unknown = null;
  private closePromise: Promise<void> | null = null;
  private readonly readyPromise: Promise<void>;
  private markReady: () => void = () => undefined;
  /** Who check() and its errors name. */
  private readonly what: string;

  constructor(
    inbox: InboxAcceptor,
    private readonly options: ResolvedConsumerOptions,
  ) {
    this.names = options.names;
    this.what = `RabbitMQ consumer ${options.decode.consumer} of queue ${options.names.queue}`;
    const { connection, owned } = useConnection(options.connection, options.logger);
    this.connection = connection;
    this.ownsConnection = owned;
    this.logger = guardLogger(options.logger ?? connection.options.logger);
    this.emit = consumerEmitter('rabbitmq', this.names.queue, options.observer, this.logger);
    this.prefetch = options.prefetch;
    this.bodies = new BodyGuard(options.maxBodyBytes, this.logger, this.names.queue);
    const topology = options.topology;
    this.copies = new CopyChannel(
      () => this.connection.current,
      this.logger,
      this.names.queue,
      topology ? (channel) => declareWorkQueue(channel, topology) : null,
    );
    const settler = (this.settler = new DeliverySettler({
      copies: this.copies,
      inbox,
      names: this.names,
      decode: options.decode,
      maxTransportRetries: options.maxTransportRetries,
      retryBackoff: options.retryBackoff,
      random: options.random,
      confirmTimeoutMs: options.confirmTimeoutMs,
      closing: this.closing.signal,
      logger: this.logger,
      observer: options.observer,
      emit: this.emit,
      copyUserId: this.connection.user,
    }));
    this.buffer = new DeliveryBuffer(options.maxBatchSize, options.maxBatchesInFlight, (batch) =>
      settler.settle(batch),
    );
    this.readyPromise = new Promise((resolve) => {
      this.markReady = resolve;
    });
  }

  /**
   * Registers on the connection and connects, in the root context: the connection's socket and
   * the consume callbacks amqplib calls from its events run outside any span of the caller
   * (review 71); a connection opened elsewhere runs its reconnect loop there too (connection.ts).
   */
  start(): void {
    inRootContext(() => this.listen());
  }

  private listen(): void {
    const stopSetup = this.connection.onConnected((model) => {
      this.watchConnection(model);
      return this.attach(model);
    });
    const stopRetries = this.connection.onConnectRetry((error, retryInMs) => {
      if (this.closing.signal.aborted) return;
      this.noteFailure(error);
      this.emit({ type: 'disconnected', error: describeCause(error), retryInMs });
    });
    this.unsubscribe = () => {
      stopSetup();
      stopRetries();
      this.watchConnection(null);
    };
    this.connection.connect().catch((error: unknown) => {
      // The shared connection was closed before the consumer attached: it never will.
      if (this.closing.signal.aborted || !(error instanceof FerryError) || error.code !== 'FERRY_CLOSED')
        return;
      this.attempts.refused(error);
    });
  }

  /**
   * Listens to `model`'s close (one listener at a time, none once closed: consumers attached and
   * closed on a long-lived shared connection leave nothing on it). A connection lost after the
   * consumer attached is what check() names, also when its channel was lost first (review 130).
   */
  private watchConnection(model: ChannelModel | null): void {
    this.watched?.model.off('close', this.watched.listener);
    this.watched = null;
    if (model === null) return;
    const listener = (error: unknown) => {
      if (this.watched?.model === model) this.watched = null;
      if (this.closing.signal.aborted || !this.attempts.hasAttached) return;
      this.attempts.lost(error ?? transportError('the connection closed'), 'connection');
    };
    model.once('close', listener);
    this.watched = { model, listener };
  }

  ready(options?: ReadyOptions): Promise<void> {
    return awaitReady('RabbitMQ consumer', this.readyPromise, this.closing.signal, options, this.attempts);
  }

  check(): Promise<void> {
    return checkAttached(this.what, this.closing.signal, this.attempts);
  }

  close(): Promise<void> {
    if (!this.closePromise) this.closePromise = this.shutdown();
    return this.closePromise;
  }

  private async shutdown(): Promise<void> {
    this.closing.abort(new Error('consumer closed'));
    this.unsubscribe?.();
    const channel = this.channel;
    const ms = this.options.closeTimeoutMs;
    // Bounded as a whole (review 101): a database that does not answer the acceptance of a batch
    // in flight (a lock held on the inbox table) held close() for as long as that took. Past the
    // bound what is left is destroyed: a delivery not acked goes back to the queue, and is answered
    // as a duplicate if its acceptance committed meanwhile.
    const gaveUp = new AbortController();
    if (!(await settlesWithin(this.finish(channel, gaveUp.signal), ms))) {
      gaveUp.abort();
      this.logger.warn(
        { queue: this.names.queue, closeTimeoutMs: ms },
        `ferry.rabbitmq: consumer did not finish closing within ${ms} ms (closeTimeoutMs): its ` +
          (this.ownsConnection ? 'connection is destroyed' : 'channels are closed') +
          '; deliveries not acked go back to the queue',
      );
      await this.destroy(channel);
    }
    this.emit.closed();
  }

  /**
   * Cancels the consumer, lets the batches in flight finish, closes the channels and an owned
   * connection; stops between steps once `gaveUp` aborted (close() gave up on it: destroy()), and
   * stops waiting for an answer then, its timer cleared (it fired after close() resolved).
   */
  private async finish(channel: ConfirmChannel | null, gaveUp: AbortSignal): Promise<void> {
    const over = () => gaveUp.aborted;
    // Each of the broker's answers is waited for at most CLOSE_ANSWER_MS: a node under a resource
    // alarm answers none on a connection that published (a dead-letter copy, a publisher sharing
    // it) until the alarm clears. Deliveries not settled then are the broker's to redeliver.
    const answer = (work: Promise<unknown>) =>
      settlesWithin(work, Math.min(CLOSE_ANSWER_MS, this.options.confirmTimeoutMs), gaveUp);
    // An attach in flight ends at once (its waits end with the consumer's closing), closing the
    // channel it opened or is opening; the channel is the consumer's until then. Work it leaves
    // (the close of a channel whose open is still answered) is waited for as well; settled, not
    // fulfilled: a work that failed must not skip the cancel and the closes below.
    while (this.inFlight.size > 0) await Promise.allSettled(this.inFlight);
    if (over()) return;
    if (channel && this.consumerTag !== null) await answer(channel.cancel(this.consumerTag));
    await this.buffer.drained().catch(() => undefined);
    if (over()) return;
    this.channel = null;
    if (channel) await answer(channel.close());
    if (over()) return;
    await answer(this.copies.close());
    if (this.ownsConnection && !over()) await this.connection.close();
  }

  /**
   * What is left once close() gave up waiting: an owned connection is destroyed (its socket: the
   * broker requeues every delivery not acked at once, whatever it answers), else the consumer's
   * channels are closed without waiting for the broker's answer. A batch whose acceptance is still
   * in flight finishes on its own; its acks find the channel closed (nothing acked that the broker
   * does not redeliver, nothing reported after `closed`).
   */
  private async destroy(channel: ConfirmChannel | null): Promise<void> {
    this.channel = null;
    if (this.ownsConnection) {
      await this.connection.destroy();
      return;
    }
    if (channel) void channel.close().catch(() => undefined);
    void this.copies.close();
    await amqplibTurn();
  }

  /**
   * `work` of the consumer's own (an attach loop, the close of a channel opened too late), kept
   * until it settles: close() waits for it, so that nothing of the consumer runs, and no channel of
   * it is open, once close() resolved (review 130: a channel whose open was in flight at close()
   * was closed after close() resolved, on a connection shared with other consumers).
   */
  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    const done = () => void this.inFlight.delete(work);
    work.then(done, done);
    return work;
  }

  /** Opens a channel on `model`, declares the topology and consumes; retries with backoff while `model` lives. */
  private attach(model: ChannelModel): Promise<void> {
    return this.track(this.attachLoop(model));
  }

  private async attachLoop(model: ChannelModel): Promise<void> {
    if (this.attaching === model) return;
    this.attaching = model;
    try {
      for (let failures = 0; !this.closing.signal.aborted && this.connection.current === model;) {
        try {
          await this.openChannel(model);
          return;
        } catch (error) {
          // Ended by close() (its deadline aborts with the consumer's closing): no failure, no
          // retry. Reported, every shutdown that met an attach said `disconnected` (lost, a retry
          // promised) and warned "attach failed; retrying" (review100-closeRace.test.ts).
          if (this.closing.signal.aborted) return;
          failures += 1;
          const delay = backoffDelay(
            failures,
            this.connection.options.reconnectBackoff,
            this.connection.options.random,
          );
          this.noteFailure(error);
          this.logger.warn(
            { err: error, delay, queue: this.names.queue },
            'ferry.rabbitmq: attach failed; retrying',
          );
          this.emit({ type: 'disconnected', error: describeCause(error), retryInMs: delay });
          await abortableDelay(delay, this.closing.signal).catch(() => undefined);
        }
      }
    } finally {
      if (this.attaching === model) this.attaching = null;
    }
  }

  /**
   * One channel attempt: open, declare, prefetch, consume, within connectTimeoutMs. A connection
   * that stays up but does not answer (a node blocking it under a resource alarm, heartbeats still
   * flowing) otherwise held the re-attach for ever, with no event (review30-silent-broker.test.ts):
   * past the deadline the attempt fails (reported `disconnected`, retried after the backoff), and a
   * channel the broker opens later is closed.
   */
  private async openChannel(model: ChannelModel): Promise<void> {
    const ms = this.connection.options.connectTimeoutMs;
    const deadline = deadlineSignal(ms, this.closing.signal);
    const bounded = <T>(work: Promise<T>, step: string): Promise<T> =>
      untilAborted(work, deadline, () =>
        this.closing.signal.aborted
          ? new Error('consumer closed')
          : transportError(
              `RabbitMQ did not answer the consumer's ${step} within ${ms} ms (connectTimeoutMs)`,
            ),
      );
    const opening = openConfirmChannel(model);
    let channel: ConfirmChannel;
    try {
      channel = await bounded(opening, 'channel open');
    } catch (error) {
      const late = opening.then(
        (opened) => settlesWithin(opened.close(), CLOSE_ANSWER_MS),
        () => undefined,
      );
      // close() waits for it while the broker answers (the open, then the close, each at most
      // CLOSE_ANSWER_MS); a broker that does not answer the open holds no close().
      void this.track(
        settlesWithin(opening, CLOSE_ANSWER_MS).then((answered) => (answered ? late : undefined)),
      );
      throw error;
    }
    // Before it consumes: no body over maxBodyBytes is kept (only this channel: its copies go out
    // on the copy channel, whose returns carry bodies the consumer read).
    this.bodies.guard(channel);
    channel.on('error', (error: unknown) => {
      this.channelError = error;
      this.logger.warn({ err: error, queue: this.names.queue }, 'ferry.rabbitmq: consumer channel error');
    });
    // A connection error during the attempt is why it failed (the channel's own answer is only
    // "Channel ended"): a declare RabbitMQ refuses with a connection error (503 for an exchange
    // type no plugin registers) is then a refusal ready() reports at once (isRefusal).
    let connectionError: unknown = null;
    const onConnectionError = (error: unknown) => (connectionError ??= error);
    model.on('error', onConnectionError);
    try {
      if (this.options.topology)
        await bounded(declareWorkQueue(channel, this.options.topology), 'queue declare');
      await bounded(channel.prefetch(this.prefetch), 'prefetch');
      // Its copy channel too, before it consumes (review 122): opened at the first copy, it could
      // find the connection's channelMax used up by the consumers attached meanwhile, and every
      // delivery to dead-letter or retry was requeued for ever. A connection with no channel left
      // for it refuses the consumer now (ChannelsExhaustedError), before it takes any delivery.
      // The topology was just declared on this connection: the copy channel does not declare it again.
      await bounded(this.copies.get(deadline, this.options.topology !== null), 'copy channel open');
      if (this.closing.signal.aborted) throw new Error('consumer closed');
      channel.once('close', () => this.onChannelClosed(channel, model));
      this.channel = channel;
      this.opening = channel;
      // What befalls this channel from now (its error, the broker's cancel) fails the attempt.
      this.channelError = null;
      this.unchecked = { channel, entries: [] };
      const { consumerTag } = await bounded(
        channel.consume(this.names.queue, (message) => this.onMessage(channel, message), { noAck: false }),
        'consume',
      );
      this.stillAttaching(channel);
      // A stream queue is not supported (README, known limits): refused before it offers anything.
      const { entries } = this.unchecked;
      const stream = await isStreamQueue(
        async () => (await bounded(channel.checkQueue(this.names.queue), 'queue check')).consumerCount,
        () => entries.map((entry) => entry.message),
        ms,
        deadline,
      );
      if (stream) throw new StreamQueueError(this.names.queue);
      // A delivery can end the check without a request on the channel (after a count of 0): a
      // channel closed or cancelled meanwhile is found here, else the consumer counted itself
      // attached on it (review 131).
      this.stillAttaching(channel);
      if (this.closing.signal.aborted) throw new Error('consumer closed');
      this.consumerTag = consumerTag;
      this.unchecked = null;
      for (const entry of entries) this.offer(entry);
    } catch (error) {
      if (this.channel === channel) this.channel = null;
      await settlesWithin(channel.close(), Math.min(CLOSE_ANSWER_MS, ms));
      throw connectionError ?? error;
    } finally {
      model.off('error', onConnectionError);
      if (this.opening === channel) this.opening = null;
      if (this.unchecked?.channel === channel) this.unchecked = null;
    }
    this.channelError = null;
    this.attempts.attached();
    this.markReady();
    this.emit({ type: 'connected' });
  }

  /**
   * Throws when `channel`, the attempt's, closed since it was handed the consumer, or the broker
   * failed or cancelled it (its close still unanswered): as the broker answered the consume, or
   * during the stream check. A failed attempt, which the attach loop reports and retries, not a
   * start on a channel that consumes nothing (onChannelClosed leaves an attempt's channel to it).
   */
  private stillAttaching(channel: ConfirmChannel): void {
    if (this.closing.signal.aborted) return;
    if (this.channel !== channel || this.channelError !== null)
      throw this.channelError ?? transportError("the consumer's channel closed while it attached");
  }

  /** Records a failed connect or attach for ready(); a refusal only an operator can fix rejects it at once. */
  private noteFailure(error: unknown): void {
    if (!isRefusal(error)) return this.attempts.failed(error);
    const unknownType = unknownExchangeType(error);
    const hint =
      unknownType !== null
        ? ` (a binding's exchangeType ${JSON.stringify(unknownType)}: no plugin of the broker registers it;` +
          ' enable the plugin that provides it (rabbitmq-plugins enable <plugin>) and the consumer attaches)'
        : /PRECONDITION/i.test(String((error as { message?: unknown }).message))
          ? ' (an existing queue or exchange has other arguments than this consumer declares: pass' +
            ' declareTopology: false to consume a queue as it was declared, see the README)'
          : '';
    this.attempts.refused(
      new FerryError(
        'FERRY_PERMANENT_FAILURE',
        `RabbitMQ refused consumer of queue ${this.names.queue}: ${describeCause(error)}${hint}`,
        { cause: error, details: { queue: this.names.queue } },
      ),
    );
  }

  private onChannelClosed(channel: ConfirmChannel, model: ChannelModel): void {
    if (this.channel !== channel) return;
    this.channel = null;
    this.consumerTag = null;
    this.buffer.dropChannel(channel);
    this.settler.channelClosed(channel);
    // An attempt in progress fails with it: the attach loop reports that failure and retries.
    if (this.closing.signal.aborted || this.opening === channel) return;
    this.logger.warn({ queue: this.names.queue }, 'ferry.rabbitmq: consumer channel closed; re-attaching');
    // Re-attached at once: on this connection if it lives, else on the next (reconnected at once too).
    // The broker closing the channel alone tells it why (its 'error', or the cancel): with no reason
    // the channel closed with its connection (amqplib closes every channel, then the connection,
    // whose close watchConnection() records with the connection's own reason).
    const part = this.channelError === null ? 'connection' : 'channel';
    const error = this.channelError === null ? 'the connection closed' : describeCause(this.channelError);
    this.attempts.lost(this.channelError ?? error, part);
    this.emit({ type: 'disconnected', error, retryInMs: 0 });
    if (this.connection.current === model) void this.attach(model);
  }

  private onMessage(channel: ConfirmChannel, message: Message | null): void {
    if (message === null) {
      // The broker cancelled the consumer (queue deleted): re-attach re-declares it. The cancel is
      // why the channel closes, and what the event and check() name. It is the loss: nothing is
      // consumed from now, also while the broker does not answer the close (a node blocking the
      // connection under an alarm reads none of it), when check() still said attached (review 131).
      if (this.channel !== channel) return;
      this.channelError ??= transportError(
        `RabbitMQ cancelled the consumer of queue ${this.names.queue} (the queue was deleted, or its node went away); re-attaching`,
      );
      if (this.opening !== channel) this.attempts.lost(this.channelError, 'channel');
      void channel.close().catch(() => undefined);
      return;
    }
    const entry = { message, channel };
    if (this.unchecked?.channel === channel) this.unchecked.entries.push(entry);
    else this.offer(entry);
  }

  private offer(entry: Entry): void {
    this.settler.received(entry);
    this.buffer.push(entry);
  }
}
