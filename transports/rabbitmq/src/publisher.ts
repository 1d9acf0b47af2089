import { setMaxListeners } from 'node:events';
import type { ConfirmChannel } from 'amqplib';
import {
  FerryConfigError,
  type Logger,
  type OutboxMessage,
  type PublishOutcome,
  type Publisher,
} from '@ferry/core';
import {
  guardLogger,
  clearableAny,
  closedOutcome,
  deadlineSignal,
  observePublish,
  PublishCalls,
  outboxHeaders,
  UnansweredLedger,
  type PublishReport,
} from '@ferry/core/transport';
import { publishWithConfirm, type ConfirmResult } from './confirm';
import { fitsEveryFrame, frameFault, headerTableFault, negotiatedFrameMax } from './headerTable';
import { RabbitConnection, openConfirmChannel, useConnection } from './connection';
import { RABBITMQ_SYSTEM } from './delivery';
import { closedError, describeError, transportError } from './errors';
import {
  channelRefusal,
  isolate,
  namedExchanges,
  namesAnExchange,
  openLane,
  SuspectExchanges,
  type ChannelRefusal,
} from './refusals';
import { CLOSE_ANSWER_MS, untilAborted } from './waits';
import { onEvent, settlesWithin } from '@ferry/core/transport';
import { blockedNote, failedOutcome, permanent, retryable, unavailable } from './publishOutcomes';
import { encodeMessage, overlongRoute, publishOptions, resolveRoute } from './route';
import { smallestFirst, unblocked, type SendItem } from './sendItem';
import type { ConnectionOptions } from './options';
import {
  resolvePublisherOptions,
  type RabbitPublisherOptions,
  type ResolvedPublisherOptions,
} from './publisherOptions';

/**
 * The outbox relay's Publisher: a confirm channel, `mandatory` publishes. A message is `sent`
 * only when the broker acked it and did not return it; a nack, a return (unroutable), the relay's
 * abort and a publish the broker refused by closing the channel report `retryable`; an outage,
 * the messages a refusal took down with it and what close() kept from being confirmed
 * `unavailable` (see the README). A batch is published
 * in flight together and its confirms awaited together, except the messages to suspect exchanges
 * (publishAlone).
 */
export class RabbitPublisher implements Publisher {
  /** OpenTelemetry's messaging.system of the relay's publish spans. */
  readonly system = RABBITMQ_SYSTEM;

  /**
   * The longest publish() takes when the broker never answers (Publisher.answerWithinMs): one
   * confirmTimeoutMs, which bounds its channel open, its checks and its confirms together.
   */
  get answerWithinMs(): number {
    return this.options.confirmTimeoutMs;
  }
  private readonly connection: RabbitConnection;
  private readonly ownsConnection: boolean;
  private readonly options: ResolvedPublisherOptions;
  private readonly logger: Logger;
  private readonly report: PublishReport;
  private current: ConfirmChannel | null = null;
  /**
   * Exchanges seen to exist. A publish to an exchange that does not exist makes the broker close
   * the channel, and every message published after it on that channel is lost with it: one
   * mistyped destination would spend the attempts of the rest of every batch it is in. So a
   * batch's exchanges not seen yet are checked first (a passive declare on a channel of its own).
   */
  private readonly knownExchanges = new Set<string>();
  /**
   * Exchanges a shared channel closed at (or may have: the broker's reply text names the refused
   * exchange, cut short, possibly ambiguously): their messages are published alone, each
   * exchange on a channel of its own, one message at a time (publishAlone), so that a refusal
   * charges the refused message only and closes no channel its neighbours are on.
   */
  private readonly suspects = new SuspectExchanges();
  private opening: Promise<ConfirmChannel> | null = null;
  /**
   * The publishOn calls under way on each channel. The relay runs two publish calls at once on
   * the shared channel: one discarding it (a nack, a confirm timeout, a publish amqplib could not
   * encode) closes it only once the other stopped waiting for its confirms (discardChannel).
   */
  private readonly users = new Map<ConfirmChannel, number>();
  /** Channels discarded while another call still waited for confirms on them: closed after it. */
  private readonly discarded = new WeakSet<ConfirmChannel>();
  private closed = false;
  /** close() once called: every later call waits for the same. */
  private closing: Promise<void> | null = null;
  /** Aborted by close(): a publish in flight is answered at once, as by its caller's signal. */
  private readonly stopping = new AbortController();
  /** The publish() calls in flight, which close() waits for (PublishCalls). */
  private readonly calls = new PublishCalls();
  /** The messages the broker left unconfirmed last time: published last (publishChecked). */
  private readonly unconfirmed = new UnansweredLedger();

  /** `connection`: a shared RabbitConnection, or options / a URL for a connection this publisher owns. */
  constructor(
    connection: RabbitConnection | ConnectionOptions | string,
    options: RabbitPublisherOptions = {},
  ) {
    this.options = resolvePublisherOptions(options);
    if (
      !(connection instanceof RabbitConnection) &&
      typeof connection === 'object' &&
      connection !== null &&
      'connection' in connection
    ) {
      // The shape before 0.x aligned the publishers: new RabbitPublisher({ connection, routes }).
      throw new FerryConfigError(
        'connection',
        'goes first now, not among the options: new RabbitPublisher(connection, options)',
      );
    }
    const used = useConnection(connection, this.options.logger);
    this.connection = used.connection;
    this.ownsConnection = used.owned;
    this.logger = guardLogger(this.options.logger ?? this.connection.options.logger);
    this.report = {
      transport: 'rabbitmq',
      observer: this.options.observer,
      logger: this.logger,
      calls: this.calls,
    };
  }

  /**
   * Connects (safe to call again); publish() also connects lazily. `signal` bounds the wait
   * (RabbitConnection.connect): without it, an unreachable broker is waited for until it answers.
   */
  async connect(signal?: AbortSignal): Promise<void> {
    await this.connection.connect(signal);
  }

  /**
   * The exchange `message` is routed to, never its routing key (`events/user.8812.updated` is
   * `events`); on the default exchange, whose routing key names the queue, that queue. Null: no
   * route. The relay's span name and the observer's `destination`.
   */
  destinationName(message: OutboxMessage): string | null {
    const route = resolveRoute(message, this.options.routes, this.options.defaultDestination);
    return route === null ? null : route.exchange || route.routingKey;
  }

  publish(messages: readonly OutboxMessage[], signal: AbortSignal): Promise<readonly PublishOutcome[]> {
    return observePublish(
      this.report,
      messages,
      (message) => this.destinationName(message),
      () => this.publishUntilClosed(messages, signal),
    );
  }

  /**
   * publishNow, ended by close() as by the caller's `signal`: what close() kept from being
   * published or confirmed is `unavailable` (closedOutcome: the broker out of the relay's reach,
   * no attempt spent), what the caller's signal did `retryable`.
   */
  private async publishUntilClosed(
    messages: readonly OutboxMessage[],
    signal: AbortSignal,
  ): Promise<readonly PublishOutcome[]> {
    // Not AbortSignal.any: Node 20 kept every call's signal in the closing one (review 99).
    const stop = clearableAny([signal, this.stopping.signal]);
    try {
      return await this.publishNow(messages, signal, stop.signal);
    } finally {
      stop.clear();
    }
  }

  private async publishNow(
    messages: readonly OutboxMessage[],
    /** The relay's signal: aborted, it gave up on the publish and discards the answer (`retryable`). */
    signal: AbortSignal,
    /** `signal` or close(): ends every wait of the call. */
    ended: AbortSignal,
  ): Promise<readonly PublishOutcome[]> {
    if (this.closed) return messages.map((m) => closedOutcome(m.id));
    const deadline = deadlineSignal(this.options.confirmTimeoutMs, ended);
    // Each publish in flight listens, and each lane's channel open (publishAlone).
    setMaxListeners(2 * messages.length + 10, deadline);
    const outcomes = new Map<number, PublishOutcome>();
    const toSend: SendItem[] = [];
    messages.forEach((message, index) => {
      const route = resolveRoute(message, this.options.routes, this.options.defaultDestination);
      if (!route) outcomes.set(index, permanent(message.id, `no route for event type ${message.type}`));
      else {
        const tooLong = overlongRoute(route) ?? headerTableFault(outboxHeaders(message));
        if (tooLong === null) toSend.push({ index, message, ...route });
        else outcomes.set(index, permanent(message.id, tooLong));
      }
    });
    if (toSend.length > 0) {
      let channel = await this.channelFor(toSend, deadline, signal, outcomes);
      if (channel) {
        const fitting = this.refuseOverFrame(channel, toSend, outcomes);
        const checked = await this.holdBackMissing(fitting, outcomes, deadline);
        // Another call discarded the channel while this one checked its exchanges (its nack, its
        // confirm timeout): nothing may go on it any more, the batch goes on the next one.
        if (checked.length > 0 && this.discarded.has(channel))
          channel = await this.channelFor(checked, deadline, signal, outcomes);
        if (channel && checked.length > 0)
          await this.publishChecked(channel, checked, deadline, signal, outcomes);
      }
    }
    return messages.map(
      (message, index) => outcomes.get(index) ?? retryable(message.id, 'no outcome reported'),
    );
  }

  /**
   * The shared channel to publish `items` on, or null when there is none: the connection is down
   * or the publisher closed (`unavailable`), or the relay gave up on the publish itself (its
   * `stop` signal: `retryable`, an answer it discards), each reported in `outcomes`.
   */
  private async channelFor(
    items: readonly SendItem[],
    deadline: AbortSignal,
    stop: AbortSignal,
    outcomes: Map<number, PublishOutcome>,
  ): Promise<ConfirmChannel | null> {
    try {
      return await this.openChannel(deadline);
    } catch (error) {
      const report = stop.aborted ? retryable : unavailable;
      for (const item of items) outcomes.set(item.index, report(item.message.id, describeError(error)));
      return null;
    }
  }

  /**
   * Ends the publishes in flight (what they did not have confirmed is `unavailable`), closes the
   * channel and an owned connection, and resolves once every publish in flight has answered and
   * told the observer: nothing of the publisher reports after it (review 145). A second call
   * waits for the first.
   */
  close(): Promise<void> {
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  private async closeOnce(): Promise<void> {
    this.closed = true;
    // A publish from now on is answered `unavailable` and reports nothing (observePublish).
    this.calls.close();
    this.stopping.abort(closedError('RabbitMQ publisher'));
    const channel = this.current;
    this.current = null;
    // A bounded wait for the broker's close-ok (CLOSE_ANSWER_MS): a node under a resource alarm
    // does not answer it until the alarm clears (the connection's own close is bounded as well).
    if (channel)
      await settlesWithin(channel.close(), Math.min(CLOSE_ANSWER_MS, this.options.confirmTimeoutMs));
    if (this.ownsConnection) await this.connection.close();
    await this.calls.settled(this.answerWithinMs);
  }

  /**
   * Publishes `items` on the call's `deadline`, the messages whose last publish the broker left
   * unconfirmed (and the later messages of their keys) last, after the others were confirmed
   * (smallestFirst). A message too large to upload within
   * confirmTimeoutMs over a slow link holds back every publish behind it on the connection: sent
   * in the middle of its batch, its neighbours went unconfirmed with it, publish after publish.
   * Nothing is charged for going unconfirmed (`unavailable`): on one connection a message too
   * slow to upload cannot be told from a connection gone silent or half-open, nor from a
   * concurrent publish's upload ahead of it, and charging those turned healthy events FAILED
   * (review 36). Such a message stays `unavailable` until confirmTimeoutMs fits its upload.
   */
  private async publishChecked(
    channel: ConfirmChannel,
    items: readonly SendItem[],
    deadline: AbortSignal,
    stop: AbortSignal,
    outcomes: Map<number, PublishOutcome>,
  ): Promise<void> {
    const call: CallAnswers = { sent: 0, answered: 0 };
    const heldKeys = new Set<string>();
    const first: SendItem[] = [];
    const deferred: SendItem[] = [];
    for (const item of items) {
      const key = item.message.orderingKey ?? null;
      const held = this.unconfirmed.wasUnanswered(item.message.id) || (key !== null && heldKeys.has(key));
      if (held && key !== null) heldKeys.add(key);
      (held ? deferred : first).push(item);
    }
    if (first.length > 0) await this.publishRound(channel, first, deadline, stop, outcomes, call);
    if (deferred.length === 0) return;
    // The status each key's first message not sent got; its later (deferred) messages share it.
    const failedKeys = new Map<string, 'unavailable' | 'retryable'>();
    for (const item of first) {
      const key = item.message.orderingKey ?? null;
      const status = outcomes.get(item.index)?.status;
      if (key === null || status === undefined || status === 'sent' || failedKeys.has(key)) continue;
      failedKeys.set(key, status === 'unavailable' ? 'unavailable' : 'retryable');
    }
    const ready: SendItem[] = [];
    for (const item of deferred) {
      const key = item.message.orderingKey ?? null;
      const keyFailure = key === null ? undefined : failedKeys.get(key);
      if (keyFailure === undefined) {
        ready.push(item);
        continue;
      }
      // An outage (unavailable) spends no attempt of the key's later messages either.
      const error = `an earlier message of ordering key ${key} was not sent`;
      outcomes.set(
        item.index,
        keyFailure === 'unavailable'
          ? unavailable(item.message.id, error)
          : retryable(item.message.id, error),
      );
    }
    if (ready.length === 0) return;
    if (call.sent > 0 && call.answered === 0) {
      const error = "not published: the broker confirmed none of this publish's messages";
      for (const item of ready) outcomes.set(item.index, unavailable(item.message.id, error));
      return;
    }
    const ordered = smallestFirst(ready);
    const last = await this.channelFor(ordered, deadline, stop, outcomes);
    if (last) await this.publishRound(last, ordered, deadline, stop, outcomes, call);
  }

  /**
   * Publishes `items`: the messages to suspect exchanges (and the other messages of their keys)
   * alone, each exchange in a lane of its own, the others together on `channel`, all at once.
   * When the broker closed `channel` at a publish it refused, the messages that failed with it
   * are published again (at most `again` more rounds: each refusal adds a suspect), the
   * exchanges the refusal may name now alone.
   */
  private async publishRound(
    channel: ConfirmChannel,
    items: readonly SendItem[],
    deadline: AbortSignal,
    stop: AbortSignal,
    outcomes: Map<number, PublishOutcome>,
    call: CallAnswers,
    again = 2,
  ): Promise<void> {
    const { shared, lanes } = isolate(items, this.suspects);
    const together =
      shared.length > 0
        ? this.publishOn(channel, shared, deadline, stop, outcomes, call, false)
        : Promise.resolve(NO_REFUSAL);
    await Promise.all(lanes.map((lane) => this.publishAlone(lane, deadline, stop, outcomes, call)));
    const { refusal, failed: lost } = await together;
    if (refusal === null || lost.length === 0) return;
    this.suspectRefused(refusal, lost, outcomes, again > 0);
    const failed = unblocked(items, lost, outcomes);
    if (again <= 0 || failed.length === 0 || deadline.aborted || stop.aborted) return;
    let fresh: ConfirmChannel;
    try {
      fresh = await this.openChannel(deadline);
    } catch {
      return; // they stay unavailable: no attempt spent
    }
    await this.publishRound(fresh, failed, deadline, stop, outcomes, call, again - 1);
  }

  /**
   * Publishes `items` one at a time, each confirmed before the next, on a channel of their own:
   * a channel the broker closes here was closed at that message, which alone is charged
   * (`retryable`, naming the broker's reason; the next goes on a new channel). A key's later
   * messages wait behind one not sent (`unavailable`). An exchange the broker confirmed a
   * message of here, refusing none, is no suspect any more.
   */
  private async publishAlone(
    items: readonly SendItem[],
    deadline: AbortSignal,
    stop: AbortSignal,
    outcomes: Map<number, PublishOutcome>,
    call: CallAnswers,
  ): Promise<void> {
    const heldKeys = new Set<string>();
    const refused = new Set<string>();
    const confirmed = new Set<string>();
    let channel: ConfirmChannel | null = null;
    try {
      for (const item of items) {
        const key = item.message.orderingKey ?? null;
        const hold = (outcome: PublishOutcome) => {
          outcomes.set(item.index, outcome);
          if (key !== null) heldKeys.add(key);
        };
        if (key !== null && heldKeys.has(key)) {
          hold(unavailable(item.message.id, `an earlier message of ordering key ${key} was not sent`));
          continue;
        }
        // close() returned: nothing more goes out, on a lane already open either (review 60).
        if (this.closed && !stop.aborted) {
          hold(closedOutcome(item.message.id));
          continue;
        }
        if (stop.aborted || deadline.aborted) {
          const error = 'not published: the publish deadline passed before its turn';
          hold(stop.aborted ? retryable(item.message.id, error) : unavailable(item.message.id, error));
          continue;
        }
        if (channel === null) {
          try {
            const opened = await openLane(this.connection, deadline, this.logger, () =>
              transportError(`no channel to publish on${blockedNote(this.connection)}`, deadline.reason),
            );
            if (this.closed) {
              void opened.close().catch(() => undefined);
              throw closedError('RabbitMQ publisher');
            }
            channel = opened;
          } catch (error) {
            const report = stop.aborted ? retryable : unavailable;
            hold(report(item.message.id, describeError(error)));
            continue;
          }
        }
        const lane: ConfirmChannel = channel;
        const { refusal } = await this.publishOn(lane, [item], deadline, stop, outcomes, call, true);
        if (refusal !== null) refused.add(item.exchange);
        const outcome = outcomes.get(item.index) ?? retryable(item.message.id, 'no outcome reported');
        if (outcome.status === 'sent') {
          confirmed.add(item.exchange);
          continue;
        }
        // Refused (the broker closed it), returned, unconfirmed: the next message gets a new one.
        void lane.close().catch(() => undefined);
        channel = null;
        hold(outcome);
      }
    } finally {
      if (channel !== null) void (channel as ConfirmChannel).close().catch(() => undefined);
    }
    // Took a message and refused none: permissions granted again, or suspected for a name the
    // refusal's cut text shares with it. One whose turn did not come stays a suspect.
    for (const exchange of confirmed) if (!refused.has(exchange)) this.suspects.cleared(exchange);
  }

  private async publishOn(
    channel: ConfirmChannel,
    items: readonly SendItem[],
    deadline: AbortSignal,
    /** The relay's signal: aborted, it gave up on the publish (the outcome is its to discard). */
    stop: AbortSignal,
    outcomes: Map<number, PublishOutcome>,
    call: CallAnswers,
    /** One message on a channel of its own (publishAlone): a refusal closing it was its own. */
    alone: boolean,
  ): Promise<PublishedOn> {
    if (this.discarded.has(channel)) {
      // Another call discarded the channel while this one checked its exchanges: nothing goes on
      // it (after a publish amqplib could not encode, confirms on it are credited to the wrong
      // message), nothing of this call was on it. Released unspent, as for a channel closed.
      for (const item of items)
        outcomes.set(item.index, unavailable(item.message.id, 'not published: the channel was discarded'));
      return NO_REFUSAL;
    }
    if (deadline.aborted) {
      // The deadline passed while the publish waited (for the channel, the exchange check):
      // nothing goes on the wire, nothing is owed on the channel, so it is kept, with the
      // exchanges seen to exist, for the next publish. Dropping them made the next one open a
      // channel and check its exchanges again: on a broker answering late, each fits the
      // deadline but not all of them, and every publish started over (test/slowBroker.test.ts).
      const error = `not published: ${describeError(deadline.reason)}`;
      for (const item of items)
        outcomes.set(
          item.index,
          failedOutcome(item.message.id, { error, unanswered: true }, false, stop, this.connection),
        );
      return NO_REFUSAL;
    }
    // A connection lost mid-publish fails the owed confirms synchronously before 'close' is
    // emitted, so this flag is set before the confirms' results are read.
    const model = this.connection.current;
    let connectionLost = false;
    const onLost = () => {
      connectionLost = true;
    };
    // Through onEvent: one listener on the connection and on the channel, however many calls run
    // at once (a listener each passed Node's limit at 11 calls: review 156).
    const stopLost = model ? onEvent(model, 'close', onLost) : () => undefined;
    // The broker closes the channel at a publish it refuses: 404 at an exchange deleted since it
    // was seen, 403 at an internal exchange or one the user may not write to, …
    let refusal: ChannelRefusal | null = null;
    const onChannelError = (error: unknown) => {
      refusal ??= channelRefusal(error);
    };
    const stopRefusal = onEvent(channel, 'error', onChannelError);
    this.users.set(channel, (this.users.get(channel) ?? 0) + 1);
    try {
      const confirms: Promise<ConfirmResult>[] = [];
      let threw = false;
      let unencodable = false;
      for (const item of items) {
        const { content, options } = encodeMessage(item.message, this.options.appId);
        confirms.push(
          publishWithConfirm(channel, item.exchange, item.routingKey, content, options, deadline, (error) => {
            threw = true;
            // amqplib throws IllegalOperationError on a channel that closed: not the message's fault.
            unencodable = (error as { name?: unknown } | null)?.name !== 'IllegalOperationError';
          }),
        );
        // amqplib queued the confirm callback of the publish that threw: no confirm after it on
        // this channel can be credited to the right message, so nothing more goes on it (nor
        // another call's publish: discarded now, not once this call's confirms are in).
        if (threw) {
          this.discardChannel(channel);
          break;
        }
      }
      // Never put on the wire, through no fault of theirs: released without spending an attempt
      // (a retryable outcome spent one for each such event ahead of them, until FAILED).
      for (const item of items.slice(confirms.length)) {
        outcomes.set(
          item.index,
          unavailable(item.message.id, 'not published: an earlier publish in the batch failed'),
        );
      }
      call.sent += confirms.length;
      const results = await Promise.all(confirms);
      // What the broker confirmed (or returned): it is up. What it left unconfirmed by the
      // deadline, on a connection still open, not blocked, the relay not giving up: remembered,
      // so the message goes last and alone next time (publishDeferred).
      const answered = items.filter((_, i) => results[i] !== undefined && results[i]!.status !== 'failed');
      if (answered.length > 0) {
        call.answered += answered.length;
        this.unconfirmed.answered(answered.map((item) => item.message.id));
      }
      if (!connectionLost && !stop.aborted && !this.closed && this.connection.blocked === null)
        results.forEach((result, i) => {
          if (result.status === 'failed' && result.unanswered === true)
            this.unconfirmed.remember(items[i]!.message.id);
        });
      // The publish amqplib refused because the channel had closed before it (another call's
      // refusal closed the shared channel while this one checked its exchanges, a lost
      // connection): it never went on the wire, so it is not charged (review 60: a healthy event
      // went FAILED beside another batch's refused one) and says nothing of its exchange.
      const closedBefore = (i: number) => threw && !unencodable && i === results.length - 1;
      results.forEach((result, i) => {
        const item = items[i]!;
        // The publish amqplib could not encode (the last one, when one threw) never will be.
        if (unencodable && i === results.length - 1 && result.status === 'failed')
          outcomes.set(item.index, permanent(item.message.id, result.error));
        else if (closedBefore(i) && result.status === 'failed')
          outcomes.set(
            item.index,
            unavailable(item.message.id, `not published: the channel had closed (${result.error})`),
          );
        else if (result.status === 'failed')
          outcomes.set(
            item.index,
            failedOutcome(item.message.id, result, connectionLost, stop, this.connection),
          );
        else if (result.status === 'returned')
          outcomes.set(item.index, retryable(item.message.id, result.error));
        else outcomes.set(item.index, { id: item.message.id, status: 'sent' });
      });
      if (results.some((r) => r.status === 'failed')) {
        this.discardChannel(channel);
        // The broker closed the channel under the publish (or nacked): one of its exchanges may
        // have been deleted since, check them again; not for a refusal for another reason (403,
        // …), nor for a confirm that is only late, which says nothing about them (checking again
        // cost a slow broker's next publish its deadline).
        const other = refusal as ChannelRefusal | null;
        const answeredFailure = results.some(
          (r, i) => r.status === 'failed' && r.unanswered !== true && !closedBefore(i),
        );
        if (answeredFailure && (other === null || other.code === NOT_FOUND)) this.knownExchanges.clear();
      }
      const refused = refusal as ChannelRefusal | null;
      if (refused === null || connectionLost) return NO_REFUSAL;
      const failed = items.filter((_, i) => results[i]?.status === 'failed');
      if (alone) {
        for (const item of failed)
          outcomes.set(item.index, retryable(item.message.id, `the broker refused it: ${refused.message}`));
        return { refusal: refused, failed: [] };
      }
      // A missing exchange: its messages are charged, the others released (chargeMissingOnly).
      if (refused.code === NOT_FOUND) {
        await this.chargeMissingOnly(failed, outcomes, deadline);
        return { refusal: refused, failed: [] };
      }
      return { refusal: refused, failed };
    } finally {
      stopLost();
      stopRefusal();
      const users = (this.users.get(channel) ?? 1) - 1;
      if (users > 0) this.users.set(channel, users);
      else {
        this.users.delete(channel);
        if (this.discarded.has(channel)) channel.close().catch(() => undefined);
      }
    }
  }

  /**
   * The broker closed a shared channel at a publish it refused (other than a missing exchange),
   * and every publish after it on the channel failed with it, and so did the ones before it it had
   * not confirmed yet (routed all the same: publishing them again duplicates them). None is
   * charged (`unavailable`); the exchanges the reply text may name (every exchange of `failed`
   * when it names none of them: a refusal of the message itself, e.g. its size) become suspects,
   * whose messages are published alone from now on, where the refused one is told apart. A text
   * naming an exchange none of them went to is another publish call's refusal on the shared
   * channel (the relay runs two at once): none is suspected while they are published again
   * (`retrying`); on the last round every one is, should the text have misled.
   */
  private suspectRefused(
    refusal: ChannelRefusal,
    failed: readonly SendItem[],
    outcomes: Map<number, PublishOutcome>,
    retrying: boolean,
  ): void {
    const exchanges = new Set(failed.map((item) => item.exchange));
    const named = namedExchanges(refusal.text, exchanges);
    const elsewhere = named.size === 0 && retrying && namesAnExchange(refusal.text);
    if (!elsewhere)
      for (const exchange of named.size > 0 ? named : exchanges) this.suspects.suspect(exchange);
    const error = `not published: the broker closed the channel at another publish it refused (${refusal.message})`;
    for (const item of failed) outcomes.set(item.index, unavailable(item.message.id, error));
  }

  /**
   * The broker closed the channel at a publish to an exchange deleted since it was seen, and every
   * publish after it on the channel failed with it: only the messages to exchanges that do not
   * exist (checked again now) stay `retryable`; the others, lost with the channel through no
   * fault of theirs, are `unavailable` (re-tried without spending an attempt). A check that
   * cannot be made charges none: the next batch checks its exchanges first (holdBackMissing).
   */
  private async chargeMissingOnly(
    failed: readonly SendItem[],
    outcomes: Map<number, PublishOutcome>,
    deadline: AbortSignal,
  ): Promise<void> {
    const missing = await this.missingExchanges(failed, deadline);
    for (const item of failed) {
      const reason = missing.get(item.exchange);
      if (reason !== undefined) outcomes.set(item.index, retryable(item.message.id, reason));
      else {
        const error = 'not published: the channel closed at another event whose exchange does not exist';
        outcomes.set(item.index, unavailable(item.message.id, error));
      }
    }
  }

  /**
   * `items` without the messages whose content header frame (properties and headers) is larger
   * than the frame_max the channel's connection negotiated, reported `permanent` in `outcomes`:
   * amqplib would write the frame anyway, RabbitMQ close the whole connection (FRAME_ERROR) and
   * every message of the batch be reported unavailable, the same batch failing every cycle.
   */
  private refuseOverFrame(
    channel: ConfirmChannel,
    items: readonly SendItem[],
    outcomes: Map<number, PublishOutcome>,
  ): readonly SendItem[] {
    const frameMax = negotiatedFrameMax(channel);
    // At RabbitMQ's default frame_max (131,072) no publish whose header table passed
    // headerTableFault can overflow a frame: nothing to size, nothing encoded twice.
    if (fitsEveryFrame(frameMax)) return items;
    return items.filter((item) => {
      const fault = frameFault(publishOptions(item.message, this.options.appId), frameMax);
      if (fault !== null) outcomes.set(item.index, permanent(item.message.id, fault));
      return fault === null;
    });
  }

  /**
   * `items` without the messages to exchanges that do not exist, nor the later messages of their
   * keys (per-key order); those are reported retryable in `outcomes`.
   */
  private async holdBackMissing(
    items: readonly SendItem[],
    outcomes: Map<number, PublishOutcome>,
    deadline: AbortSignal,
  ): Promise<readonly SendItem[]> {
    const missing = await this.missingExchanges(items, deadline);
    if (missing.size === 0) return items;
    const heldKeys = new Set<string>();
    return items.filter((item) => {
      const key = item.message.orderingKey ?? null;
      const reason = missing.get(item.exchange);
      if (reason === undefined && (key === null || !heldKeys.has(key))) return true;
      if (key !== null) heldKeys.add(key);
      outcomes.set(
        item.index,
        retryable(item.message.id, reason ?? 'an earlier message with the same key was not sent'),
      );
      return false;
    });
  }

  /**
   * The exchanges of `items` that do not exist, with the reason to report. Each exchange not seen
   * yet is declared passively on a channel of its own (the broker closes it when the exchange is
   * missing); the default exchange always exists. A check that cannot be made (the connection
   * lost) holds nothing back: the publish itself then reports what the connection allows.
   */
  private async missingExchanges(
    items: readonly SendItem[],
    deadline: AbortSignal,
  ): Promise<Map<string, string>> {
    const missing = new Map<string, string>();
    const unseen = [...new Set(items.map((item) => item.exchange))].filter(
      (exchange) => exchange !== '' && !this.knownExchanges.has(exchange),
    );
    if (unseen.length === 0) return missing;
    const model = this.connection.current;
    if (!model) return missing;
    // Bounded by the publish's deadline: past it the publish goes ahead and reports it.
    const expired = new Promise<never>((_, reject) => {
      const fail = () => reject(new Error('publish deadline passed during the exchange check'));
      if (deadline.aborted) fail();
      else deadline.addEventListener('abort', fail, { once: true });
    });
    expired.catch(() => undefined);
    try {
      for (const exchange of unseen) {
        const channel = await Promise.race([model.createChannel(), expired]);
        channel.on('error', () => undefined); // the broker's 404 closes it; reported below
        try {
          await Promise.race([channel.checkExchange(exchange), expired]);
          this.knownExchanges.add(exchange);
        } catch (error) {
          if ((error as { code?: unknown }).code !== NOT_FOUND) throw error;
          missing.set(exchange, `exchange ${exchange} does not exist (${describeError(error)})`);
        } finally {
          // Bounded too: a node that blocks the connection meanwhile does not answer the close.
          await Promise.race([channel.close(), expired]).catch(() => undefined);
        }
      }
    } catch {
      // Not checked: the publish goes ahead and reports what the broker does.
    }
    return missing;
  }

  /**
   * Confirms still owed on a channel we stopped waiting for must not be trusted: drop it, so no
   * publish goes on it any more. Closed once no other call waits for its confirms on it: closing
   * it under them failed every confirm they were owed ("channel closed"), and their healthy
   * messages were charged for this call's nack (review 139).
   */
  private discardChannel(channel: ConfirmChannel): void {
    if (this.current === channel) this.current = null;
    this.discarded.add(channel);
    if ((this.users.get(channel) ?? 0) === 0) channel.close().catch(() => undefined);
  }

  /**
   * The publisher's channel, opened once for every publish waiting on it; each stops waiting at
   * its own `signal` (its deadline). A node blocking its publishers (a resource alarm) or a silent
   * connection never answers the open: it stays pending, one at a time, and each publish meanwhile
   * gives up on it at its deadline and reports its messages `unavailable`.
   */
  private openChannel(signal: AbortSignal): Promise<ConfirmChannel> {
    if (this.current) return Promise.resolve(this.current);
    if (!this.opening) {
      this.opening = this.createChannel(signal).finally(() => {
        this.opening = null;
      });
    }
    return untilAborted(this.opening, signal, () =>
      transportError(`no channel to publish on${blockedNote(this.connection)}`, signal.reason),
    );
  }

  private async createChannel(signal: AbortSignal): Promise<ConfirmChannel> {
    void this.connection.connect().catch(() => undefined);
    const model = await this.connection.waitForConnection(signal);
    const channel = await openConfirmChannel(model);
    channel.on('error', (error: unknown) => {
      this.logger.warn({ err: error }, 'ferry.rabbitmq: publisher channel error');
    });
    channel.once('close', () => {
      if (this.current === channel) this.current = null;
    });
    if (this.closed) {
      await channel.close().catch(() => undefined);
      throw closedError('RabbitMQ publisher');
    }
    this.current = channel;
    return channel;
  }
}

/**
 * How a publishOn ended: the broker's refusal that closed the channel, if any, and the messages
 * it took down with it that are not reported yet (a shared channel, another exchange refused).
 */
interface PublishedOn {
  readonly refusal: ChannelRefusal | null;
  readonly failed: readonly SendItem[];
}

const NO_REFUSAL: PublishedOn = { refusal: null, failed: [] };

/** The messages one publish call put on the wire, and how many of them the broker answered. */
interface CallAnswers {
  sent: number;
  answered: number;
}

/** AMQP's reply code for a missing exchange. */
const NOT_FOUND = 404;
