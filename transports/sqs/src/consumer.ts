import { ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import {
  isFerryError,
  type InboxAcceptInput,
  type InboxAcceptResult,
  type InboxAcceptor,
  type Logger,
} from '@ferry/core';
import {
  abortableDelay,
  acceptHolding,
  AttachAttempts,
  awaitReady,
  backoffDelay,
  checkAttachable,
  checkAttached,
  consumerEmitter,
  deadLetterTenant,
  describeCause,
  escapeUnshowable,
  eventLoopTurns,
  inRootContext,
  loggerUntil,
  invalidResultReason,
  reportedMessageId,
  settlesWithin,
  type AcceptManyFn,
  type ConsumerEmitter,
  type HeldAcceptance,
  type ReadyOptions,
  stripUrlCredentials,
} from '@ferry/core/transport';
import { visibilityBackoffSeconds } from './backoff';
import type { SqsConnection } from './connection';
import { sendToDeadLetterQueue, type DeadLetterItem } from './deadLetter';
import { checkDeadLetterQueue, type DeadLetterTarget } from './deadLetterCheck';
import { requestDeadline } from './deadline';
import { deleteMessages } from './deleteBatch';
import { REJECT_REASONS, closedError, requestError } from './errors';
import {
  DEFAULTS,
  resolveAttachOptions,
  type ConsumerOptions,
  type ResolvedConsumerOptions,
} from './options';
import { requireRedrivePolicy } from './topology';
import { groupOrdered, heldBehind } from './groupOrder';
import { isFifoQueue } from './queueUrl';
import { VisibilityExtender, changeVisibility } from './visibility';
import { decodeMessage } from './wire';

/**
 * How long past its WaitTimeSeconds a long poll may take to be answered (the answer's way back, the
 * SDK's credentials and its retry of a failed attempt) before it counts as unanswered: SQS itself
 * answers by the wait. Not the visibility timeout (up to 12 hours): a poll a silent network or
 * ElasticMQ (its poll of a queue deleted under it) leaves unanswered held the consumer that long,
 * check() resolving all along (review 133).
 */
const POLL_ANSWER_GRACE_MS = 10_000;

/**
 * The longest a step that settles a received batch (its dead-letter copies, its deletes, a
 * visibility change, the RedrivePolicy read again) waits for SQS: the visibility timeout, at most
 * 30 s (its default). A request SQS answers takes far less (a copy of up to 256 KiB too, over a
 * link of 9 KB/s); one on a socket a network blip left silent got the whole visibility timeout
 * (up to 12 hours), the consumer polling nothing meanwhile (review 133).
 */
const SETTLE_ANSWER_MS = 30_000;

/** A received message the inbox answered. */
interface Answered {
  readonly message: Message;
  readonly input: InboxAcceptInput;
  readonly result: InboxAcceptResult;
}

export interface AttachConsumerOptions extends ConsumerOptions {
  readonly connection: SqsConnection;
}

export interface SqsConsumer {
  /**
   * Resolves once SQS answered for the queue (GetQueueAttributes: in redrive mode its
   * RedrivePolicy checked; in queue mode the dead-letter queue answered too); rejects with
   * FerryConfigError when the queue has no RedrivePolicy in redrive mode (the consumer has then
   * stopped); FERRY_PERMANENT_FAILURE at once when a queue does not exist or SQS refused the
   * credentials (the consumer keeps trying); FERRY_TIMEOUT after `timeoutMs` (default 60,000),
   * naming the last failure (e.g. the endpoint unreachable); FERRY_CLOSED once closed. The
   * start-up gate: once resolved it stays resolved, whatever becomes of later polls.
   */
  ready(options?: ReadyOptions): Promise<void>;
  /**
   * The readiness probe: resolves while SQS answers the consumer's polls; rejects at once with
   * ConsumerDisconnectedError (FERRY_TRANSPORT_ERROR) naming the consumer, its queue and the last
   * failure while it does not (before SQS first answered for the queue, and from a failed poll
   * until the next answer; for good once a configuration error stopped the consumer),
   * FERRY_CLOSED once closed.
   */
  check(): Promise<void>;
  /**
   * Aborts the long poll, lets a batch in acceptance finish (accept, delete; one held through an
   * outage is made visible again), then stops. Safe twice; concurrent calls share one promise.
   */
  close(): Promise<void>;
}

/**
 * Feeds an SQS queue into the inbox. Per received batch (long poll, up to 10 messages):
 * invalid messages are dead-lettered; the rest go to one isolated `acceptMany`
 * (acceptIsolated: a message whose acceptance fails alone is dead-lettered, its neighbours
 * are not) while their visibility is renewed; accepted and duplicate ones are deleted after
 * it resolved. While acceptance fails batch-wide (an outage) the batch is held invisible and
 * retried after the retry backoff, with no new receive; when it failed otherwise (retriable),
 * none is deleted and each gets a visibility timeout of the retry backoff, so it comes back later.
 */
export function attachSqsConsumer(acceptor: InboxAcceptor, options: AttachConsumerOptions): SqsConsumer {
  const { connection, resolved } = checkAttachable(
    acceptor,
    options,
    'connection, queueUrl and consumer',
    () => resolveAttachOptions<SqsConnection>(options),
  );
  const consumer = new PollingConsumer(acceptor, connection, resolved);
  consumer.start();
  return consumer;
}

class PollingConsumer implements SqsConsumer {
  private readonly stop = new AbortController();
  /**
   * Aborted when close() gave up waiting for the batch in hand (closeTimeoutMs): every request of
   * the consumer ends at once (settleDeadline, the visibility extender) and none is made after.
   */
  private readonly abandoned = new AbortController();
  private loop: Promise<void> = Promise.resolve();
  private closing: Promise<void> | null = null;
  private queueUrl = '';
  /** Queue mode: the dead-letter queue as checked at attach. */
  private deadLetterTarget: DeadLetterTarget | null = null;
  private readonly logger: Logger;
  private readonly emit: ConsumerEmitter;
  /** Failed polls since the last answer, named by ready()'s timeout. */
  private readonly attempts = new AttachAttempts();
  private readonly readyPromise: Promise<void>;
  private markReady: () => void = () => undefined;
  private failReady: (error: unknown) => void = () => undefined;
  /** Who check() and its errors name. */
  private readonly what: string;

  constructor(
    private readonly acceptor: InboxAcceptor,
    private readonly connection: SqsConnection,
    private readonly options: ResolvedConsumerOptions,
  ) {
    // Its lines end with close() too: a batch close() gave up on logs nothing after it (review 137).
    this.logger = loggerUntil(options.logger ?? connection.logger, this.abandoned.signal);
    // Its events end with close()'s `closed` (consumerEmitter): a batch close() gave up on reports nothing after it.
    this.emit = consumerEmitter('sqs', stripUrlCredentials(options.queueUrl), options.observer, this.logger);
    this.what = `SQS consumer ${options.consumer} of queue ${stripUrlCredentials(options.queueUrl)}`;
    this.readyPromise = new Promise((resolve, reject) => {
      this.markReady = resolve;
      this.failReady = reject;
    });
    this.readyPromise.catch(() => undefined);
  }

  /** Starts polling in the root context: the loop, and every batch, runs outside any span of the caller (review 71). */
  start(): void {
    this.loop = inRootContext(() => this.run()).catch((error: unknown) => this.onFailure(error));
  }

  ready(options?: ReadyOptions): Promise<void> {
    return awaitReady('SQS consumer', this.readyPromise, this.stop.signal, options, this.attempts);
  }

  check(): Promise<void> {
    return checkAttached(this.what, this.stop.signal, this.attempts);
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.stop.abort(closedError('SQS consumer'));
      this.failReady(closedError('SQS consumer'));
      const ms = this.options.closeTimeoutMs;
      // Bounded (review 101): the batch in hand waited for its acceptance (a database that does
      // not answer) and then for each of its requests up to the visibility timeout (an SQS that
      // stops answering). Past the bound its requests are aborted: a message not deleted comes
      // back after its visibility timeout, answered as a duplicate if its acceptance committed.
      const finished = await settlesWithin(this.loop, ms);
      if (!finished)
        this.logger.warn(
          { queue: this.options.queueUrl, closeTimeoutMs: ms },
          `ferry.sqs: consumer did not finish its batch within ${ms} ms (closeTimeoutMs): its requests ` +
            'are aborted; messages not deleted come back after their visibility timeout',
        );
      this.emit.closed();
      // After `closed` (its observer's failure still logged), at once: the lines of the batch
      // given up on end here (loggerUntil), its events ended with `closed`.
      if (!finished) this.abandoned.abort(closedError('SQS consumer'));
    })();
    return this.closing;
  }

  /**
   * Long polls until closed. Before the first poll SQS must answer for the queue (checkQueue):
   * ready() resolves and `connected` is emitted only then, once however many checks failed before,
   * and again `connected` at the first answer after failed polls; each failed poll is `disconnected` with
   * the wait before the next (`retryInMs` null: a configuration error stopped the consumer). A
   * queue that does not exist or refused credentials reject ready() at once (a refusal: the
   * consumer keeps trying). A poll SQS does not answer within the long-poll wait plus
   * POLL_ANSWER_GRACE_MS is a failed poll too.
   */
  private async run(): Promise<void> {
    const signal = this.stop.signal;
    // Failed attempts in a row (the backoff's count); `connected` follows whether the last
    // attempt answered, never this count: a start after failed queue checks is one `connected`.
    let failures = 0;
    let connected = false;
    const answered = (): void => {
      this.attempts.attached();
      if (!connected) this.emit({ type: 'connected' });
      connected = true;
    };
    while (!signal.aborted) {
      let messages: Message[];
      try {
        if (!this.queueUrl) {
          this.queueUrl = await this.checkQueue(signal);
          this.markReady();
          answered();
        }
        messages = await this.receive(signal);
        answered();
        failures = 0;
      } catch (thrown) {
        if (signal.aborted) break;
        connected = false;
        // A configuration error, or the connection closed under the consumer: no retry can help.
        const error = this.connection.isClosed
          ? closedError('SQS connection')
          : requestError(`a request for queue ${this.options.queueUrl}`, thrown); // translated where made
        if (isFerryError(error, 'FERRY_CONFIG_INVALID') || isFerryError(error, 'FERRY_CLOSED')) {
          this.logger.error(
            { err: error, queue: this.options.queueUrl },
            `ferry.sqs: consumer stopped: ${error.message}`,
          );
          this.attempts.failed(error);
          this.emit({ type: 'disconnected', error: describeCause(error), retryInMs: null });
          this.failReady(error);
          break;
        }
        failures += 1;
        if (isFerryError(error, 'FERRY_PERMANENT_FAILURE')) this.attempts.refused(error);
        else this.attempts.failed(error);
        const delay = backoffDelay(failures, this.options.reconnectBackoff, this.options.random);
        const cause = describeCause(error);
        this.logger.warn(
          { err: error, queue: this.options.queueUrl, attempt: failures, delayMs: delay },
          `ferry.sqs: polling ${this.options.queueUrl} failed (${cause}); retrying in ${delay} ms`,
        );
        this.emit({ type: 'disconnected', error: cause, retryInMs: delay });
        await abortableDelay(delay, signal).catch(() => undefined);
        continue;
      }
      if (messages.length === 0) continue;
      this.emit({ type: 'received', count: messages.length });
      await this.handleBatch(messages);
    }
  }

  /**
   * The queue's URL, once SQS answered for it and its dead-letter path was checked: its
   * RedrivePolicy in redrive mode, the dead-letter queue in queue mode (checkDeadLetterQueue;
   * GetQueueAttributes of both queues). ready() resolves only after it.
   */
  private async checkQueue(signal: AbortSignal): Promise<string> {
    const url = await this.connection.queueUrl(this.options.queueUrl, signal).catch((error: unknown) => {
      throw signal.aborted ? error : requestError(`GetQueueUrl of queue ${this.options.queueUrl}`, error);
    });
    const deadLetter = this.options.deadLetter;
    if (deadLetter.mode === 'redrive') await requireRedrivePolicy(this.connection, url, signal);
    else
      this.deadLetterTarget = await checkDeadLetterQueue(this.connection, url, deadLetter.queueUrl, signal);
    return url;
  }

  private async receive(signal: AbortSignal): Promise<Message[]> {
    const receiving = this.connection.longPoll(
      this.queueUrl,
      (sqs, abortSignal) =>
        sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: this.queueUrl,
            MaxNumberOfMessages: this.options.maxBatchSize,
            WaitTimeSeconds: this.options.waitTimeSeconds,
            VisibilityTimeout: this.options.visibilityTimeoutSeconds,
            MessageAttributeNames: ['All'],
            // All: a tenant or identity function may key on SenderId, the one attribute of a
            // message its sender cannot choose (review 43); ferry reads ApproximateReceiveCount
            // and MessageGroupId.
            MessageSystemAttributeNames: ['All'],
          }),
          { abortSignal },
        ),
      requestDeadline(this.options.waitTimeSeconds * 1000 + POLL_ANSWER_GRACE_MS, signal),
    );
    const output = await receiving.catch((error: unknown) => {
      throw signal.aborted ? error : requestError(`ReceiveMessage of queue ${this.queueUrl}`, error);
    });
    return output.Messages ?? [];
  }

  /**
   * One received batch, start to end; not interrupted by close(). A body within 6 ×
   * maxPayloadBytes is parsed before it is measured: the batch gives the event loop its turns
   * while it is decoded (core eventLoopTurns, as every consumer does; review 88).
   */
  private async handleBatch(messages: readonly Message[]): Promise<void> {
    const invalid: DeadLetterItem[] = [];
    const valid: { message: Message; input: InboxAcceptInput }[] = [];
    const turns = eventLoopTurns();
    for (const message of messages) {
      await turns();
      const decoded = decodeMessage(message, {
        consumer: this.options.consumer,
        maxPayloadBytes: this.acceptor.maxPayloadBytes,
        identity: this.options.identity,
        envelope: this.options.envelope,
        tenant: this.options.tenant,
      });
      if (decoded.ok) valid.push({ message, input: decoded.input });
      else
        invalid.push({
          message,
          messageId: decoded.messageId,
          tenant: deadLetterTenant(this.options.tenant, decoded.tenantId),
          reason: decoded.reason,
          detail: decoded.detail,
        });
    }
    if (valid.length === 0) {
      await this.settle([], invalid);
      return;
    }
    // The valid messages are kept invisible from here: the dead-letter copies of their invalid
    // neighbours may take up to the visibility timeout (review 133).
    const holding = new Set(valid.map((v) => v.message));
    const extender = this.keepInvisible(holding);
    try {
      if (invalid.length > 0) await this.settle([], invalid);
    } catch (error) {
      await extender.stop();
      throw error;
    }
    await this.accept(valid, holding, extender);
  }

  /**
   * Renews the visibility of the messages in `holding` (to visibilityTimeoutSeconds) every
   * extendEveryMs until stopped; a message taken out of `holding` is no longer renewed.
   */
  private keepInvisible(holding: ReadonlySet<Message>): VisibilityExtender {
    const seconds = this.options.visibilityTimeoutSeconds;
    return new VisibilityExtender(
      async (signal) => {
        const changes = [...holding].map((message) => ({ message, seconds }));
        if (changes.length > 0)
          await changeVisibility(this.connection, this.queueUrl, changes, this.onFailure, signal);
      },
      this.options.extendEveryMs,
      this.abandoned.signal,
    );
  }

  /**
   * Deletes the accepted and duplicate messages, then dead-letters the rejected ones (answered
   * by the inbox, or `invalid` before it) and deletes those SQS confirmed a copy of; reports
   * `accepted` and `settled` for what each of the two deletes deleted.
   */
  private async settle(answered: readonly Answered[], invalid: DeadLetterItem[] = []): Promise<void> {
    const accepted = new Set<Message>();
    const toDelete: Message[] = [];
    for (const { message, input, result } of answered) {
      if (result.kind === 'accepted' || result.kind === 'duplicate') {
        accepted.add(message);
        toDelete.push(message);
      } else if (result.kind === 'invalid') {
        invalid.push({
          message,
          messageId: input.messageId,
          tenant: deadLetterTenant(this.options.tenant, input.tenantId),
          reason: invalidResultReason(result),
          detail: `${result.code}: ${result.reason}`,
        });
      } else {
        invalid.push({
          message,
          messageId: input.messageId,
          tenant: deadLetterTenant(this.options.tenant, input.tenantId),
          reason: REJECT_REASONS.fingerprintConflict,
          detail: result.reason,
        });
      }
    }
    // Reported as each delete is confirmed: the accepted ones are deleted before the copies,
    // which may take up to settleDeadline, and close() may give up on the batch meanwhile
    // (review 137: reported after the copies, they went unreported then).
    const remove = async (messages: readonly Message[]): Promise<void> => {
      if (messages.length === 0) return;
      const deleted = await deleteMessages(
        this.connection,
        this.queueUrl,
        messages,
        this.options.deleteAttempts,
        this.onFailure,
        this.settleDeadline(),
      );
      const acceptedCount = deleted.filter((message) => accepted.has(message)).length;
      if (acceptedCount > 0) this.emit({ type: 'accepted', count: acceptedCount });
      if (deleted.length > 0) this.emit({ type: 'settled', count: deleted.length });
    };
    // The accepted ones first: a dead-letter copy may take up to the visibility timeout, and
    // they are no longer kept invisible (review 133).
    await remove(toDelete);
    await remove(await this.deadLetter(invalid));
  }

  /**
   * acceptMany under a visibility extender, each answer settled as it comes. A batch-wide
   * failure (an outage) holds the batch: the extender keeps it invisible, no new ReceiveMessage
   * is issued, and the same batch is tried again after the retry backoff (acceptHolding), so
   * the outage spends none of its receive count; close() makes it visible again at once. At the
   * admission limit the messages the inbox answered anyway (duplicates, invalid) are settled at
   * once and only the refused ones stay held. Any other failure gives each unanswered message
   * the visibility backoff of its receive count.
   */
  private async accept(
    valid: readonly { message: Message; input: InboxAcceptInput }[],
    /** The messages of `valid` still kept invisible by `extender` (keepInvisible). */
    holding: Set<Message>,
    extender: VisibilityExtender,
  ): Promise<void> {
    // No offer starts once close() gave up on the batch (review 137: one not begun yet, or the
    // next part of one retried in parts, began after close() resolved): FERRY_CLOSED, batch-wide,
    // releases what is left, which comes back after its visibility.
    const acceptMany: AcceptManyFn = (batch) =>
      this.abandoned.signal.aborted
        ? Promise.reject(closedError('SQS consumer'))
        : this.acceptor.acceptMany(batch);
    const groups = new Map(valid.map((v) => [v.input, v.message.Attributes?.MessageGroupId ?? null]));
    let outcome: HeldAcceptance;
    try {
      outcome = await acceptHolding(
        valid.map((v) => v.input),
        isFifoQueue(this.queueUrl)
          ? groupOrdered(acceptMany, (input) => groups.get(input) ?? null)
          : acceptMany,
        {
          backoff: this.options.retryBackoff,
          random: this.options.random,
          signal: this.stop.signal,
          transport: 'sqs',
          source: this.options.queueUrl,
          observer: this.options.observer,
          logger: this.logger,
        },
        async (answered) => {
          const items = answered.map(({ index, result }) => ({ ...valid[index]!, result }));
          for (const { message } of items) holding.delete(message);
          // A renewal in flight may still name them: it lands before their delete or visibility
          // change, never after (review 137).
          await extender.idle();
          const held = items.filter((item) => heldBehind(item.result) !== undefined);
          await this.settle(items.filter((item) => heldBehind(item.result) === undefined));
          if (held.length > 0)
            await this.backOff(
              held.map((item) => item.message),
              heldBehind(held[0]!.result),
            );
        },
      );
    } finally {
      await extender.stop();
    }
    if (outcome.kind === 'settled') return;
    const messages = (indices: readonly number[]) => indices.map((index) => valid[index]!.message);
    if (outcome.kind === 'released') {
      await this.release(messages(outcome.pending));
      return;
    }
    // Only the failed offer backs off; the rest, not offered since the window shrank, did not
    // fail: visible again at once, as released ones.
    if (outcome.notOffered.length > 0) await this.release(messages(outcome.notOffered));
    await this.backOff(messages(outcome.offered), outcome.error);
  }

  /**
   * The deadline of one step that settles a received batch with SQS (its dead-letter copies,
   * its deletes, a visibility change): the visibility timeout, after which SQS shows the
   * messages again anyway, at most SETTLE_ANSWER_MS (30 s). Not ended by close() before its
   * closeTimeoutMs: the batch in hand finishes, within this bound, unless close() gives up on it
   * (abandoned).
   * A step that runs out changes nothing for good: a message not deleted comes back and the
   * inbox answers it as a duplicate; one whose dead-letter copy was not confirmed is not
   * deleted and comes back to be dead-lettered again.
   */
  private settleDeadline(): AbortSignal {
    const ms = Math.min(this.options.visibilityTimeoutSeconds * 1000, SETTLE_ANSWER_MS);
    return requestDeadline(ms, this.abandoned.signal);
  }

  /**
   * close() during an outage: the held messages become visible at once, for the next consumer.
   * Given up at settleDeadline (the visibility timeout, at most 30 s): an SQS that does not answer
   * never holds close() longer; the messages come back once the visibility renewed last runs out.
   */
  private async release(messages: readonly Message[]): Promise<void> {
    const changes = messages.map((message) => ({ message, seconds: 0 }));
    await changeVisibility(this.connection, this.queueUrl, changes, this.onFailure, this.settleDeadline());
  }

  /** Not deleted: each message becomes visible again after the backoff of its receive count. */
  private async backOff(messages: readonly Message[], error: unknown): Promise<void> {
    const changes = messages.map((message) => ({ message, seconds: this.retrySeconds(message) }));
    await changeVisibility(this.connection, this.queueUrl, changes, this.onFailure, this.settleDeadline());
    const cause = describeCause(error);
    this.logger.warn(
      { err: error, queue: this.queueUrl, count: messages.length },
      `ferry.sqs: acceptance of ${messages.length} messages failed (${cause}); they come back after the retry backoff`,
    );
    this.emit({
      type: 'acceptance-failed',
      count: messages.length,
      error: cause,
      delayMs: 1000 * Math.max(...changes.map((c) => c.seconds)),
    });
  }

  /**
   * Queue mode: copies to the dead-letter queue, returned for deletion; each is reported
   * dead-lettered once SQS confirmed its copy. Redrive mode: left to the policy, and reported
   * dead-lettered each time it is received invalid (SQS moves it after maxReceiveCount).
   */
  private async deadLetter(items: readonly DeadLetterItem[]): Promise<Message[]> {
    if (items.length === 0) return [];
    const deadLetter = this.options.deadLetter;
    for (const { messageId, reason, detail } of items) {
      this.logger.warn(
        {
          queue: this.queueUrl,
          messageId: reportedMessageId(messageId),
          reason,
          detail: escapeUnshowable(detail.slice(0, 1_000)),
        },
        `ferry.sqs: invalid message (${reason}); ${deadLetter.mode === 'queue' ? 'dead-lettering it' : 'left to the redrive policy'}`,
      );
    }
    if (deadLetter.mode === 'redrive') {
      const redrives = await this.redriveStillSet();
      const changes = items.map((item) => ({
        message: item.message,
        seconds: this.retrySeconds(item.message),
      }));
      await changeVisibility(this.connection, this.queueUrl, changes, this.onFailure, this.settleDeadline());
      if (redrives)
        for (const { messageId, reason } of items) this.emit({ type: 'dead-lettered', messageId, reason });
      return [];
    }
    const failures: unknown[] = [];
    const sent = await sendToDeadLetterQueue(
      this.connection,
      deadLetter.queueUrl,
      items,
      {
        maxBatchBytes: DEFAULTS.maxBatchBytes,
        maxMessageBytes: this.deadLetterTarget?.maxMessageBytes ?? DEFAULTS.maxMessageBytes,
      },
      (error) => {
        failures.push(error);
        this.onFailure(error);
      },
      this.settleDeadline(),
    );
    for (const { messageId, reason } of sent) this.emit({ type: 'dead-lettered', messageId, reason });
    const unsent = items.filter((item) => !sent.includes(item));
    if (unsent.length > 0) await this.keepUnsent(unsent, failures.at(-1));
    return sent.map((item) => item.message);
  }

  /**
   * Items whose dead-letter copy failed stay in the queue, never deleted without a copy: an
   * error log, and each is visible again after the retry backoff of its receive count.
   */
  private async keepUnsent(items: readonly DeadLetterItem[], error: unknown): Promise<void> {
    this.logger.error(
      { err: error, queue: this.queueUrl, messageIds: items.map((item) => item.messageId) },
      `ferry.sqs: ${items.length} dead-letter copies failed (${describeCause(error)}); the messages stay in ${this.queueUrl} and come back after the retry backoff`,
    );
    const changes = items.map(({ message }) => ({ message, seconds: this.retrySeconds(message) }));
    await changeVisibility(this.connection, this.queueUrl, changes, this.onFailure, this.settleDeadline());
  }

  /**
   * Redrive mode, before invalid messages are left to the policy: is it (and its dead-letter
   * queue) still there? When not, a FerryConfigError as an `error` event and an error log, and
   * false: the messages are not reported dead-lettered (SQS will not move them). A check that
   * fails otherwise is an `error` event, and the policy checked before stands.
   */
  private async redriveStillSet(): Promise<boolean> {
    try {
      await requireRedrivePolicy(this.connection, this.queueUrl, this.settleDeadline());
      return true;
    } catch (error) {
      this.onFailure(error);
      if (!isFerryError(error, 'FERRY_CONFIG_INVALID')) return true;
      this.logger.error(
        { err: error, queue: this.queueUrl },
        `ferry.sqs: ${error.message}; invalid messages stay in the queue and come back after the retry backoff`,
      );
      return false;
    }
  }

  private retrySeconds(message: Message): number {
    const receiveCount = Number(message.Attributes?.ApproximateReceiveCount ?? 1);
    return visibilityBackoffSeconds(receiveCount, this.options.retryBackoff, this.options.random);
  }

  private readonly onFailure = (error: unknown): void =>
    this.emit({ type: 'error', error: describeCause(error) });
}
