import {
  GetQueueAttributesCommand,
  SendMessageBatchCommand,
  type SendMessageBatchResultEntry,
} from '@aws-sdk/client-sqs';
import type { OutboxMessage, PublishOutcome, Publisher } from '@ferry/core';
import {
  clearableAny,
  clearableDeadline,
  closedOutcome,
  guardLogger,
  MAX_TIMER_MS,
  observePublish,
  PublishCalls,
  type PublishReport,
  stripUrlCredentials,
  UnansweredLedger,
} from '@ferry/core/transport';
import type { SqsConnection } from './connection';
import {
  closedError,
  describeError,
  errorName,
  isCredentialsFailure,
  isPermanentEntryCode,
  publishStatus,
} from './errors';
import {
  checkSqsConnection,
  resolvePublisherOptions,
  type PublisherOptions,
  type ResolvedPublisherOptions,
} from './options';
import { isFifoQueue } from './topology';
import { queueReferenceFault } from './queueUrl';
import { attributeTextFault, encodeEntry, messageSize, SQS_SYSTEM } from './wire';

/** The error of a message not sent because the publisher (or its connection) is closed. */
const CLOSED = 'SQS publisher is closed';

/** SQS accepts at most 10 entries per SendMessageBatch. */
const MAX_BATCH_ENTRIES = 10;

interface Pending {
  readonly index: number;
  readonly message: OutboxMessage;
  readonly entry: ReturnType<typeof encodeEntry>;
  readonly size: number;
}

/**
 * Outbox publisher over SendMessageBatch. A message is reported `sent` only when it is in
 * the response's `Successful` list; every `Failed` entry is retryable or permanent by its
 * code (errors.ts); a whole request that failed is `unavailable` when SQS is unreachable or refused
 * the credentials, `permanent` for a few request errors, else retryable (publishStatus). SQS is the
 * connection's endpoint only: a queue URL clearly on another host failing so is that destination's
 * fault, `retryable` (connection.foreignHost, README "Queue hosts"), unless the failure is the
 * connection's own (its credentials) or the endpoint failed as an outage in the same call.
 *
 * Messages are grouped by queue (destination, else `routes[type]`, else `defaultDestination`),
 * then sent in order in batches of at most 10 entries and `maxBatchBytes`. On a FIFO queue,
 * once one message of an ordering key was not sent, later messages of that key in the same
 * call are not attempted (reported retryable), so the key's order holds across retries.
 */
export class SqsPublisher implements Publisher {
  /** OpenTelemetry's messaging.system of the relay's publish spans. */
  readonly system = SQS_SYSTEM;

  /**
   * The longest publish() takes (Publisher.answerWithinMs): the call's one deadline, which every
   * request of it shares (publishNow): confirmTimeoutMs for its batches, one more for the
   * messages left unanswered last time (sent alone on a deadline of their own, and a probe).
   */
  get answerWithinMs(): number {
    return Math.min(MAX_TIMER_MS, 2 * this.options.confirmTimeoutMs);
  }
  readonly options: ResolvedPublisherOptions;
  private readonly report: PublishReport;
  /** Aborted by close(): ends the requests of every publish in flight. */
  private readonly closing = new AbortController();
  /** The publish() calls in flight, which close() waits for (PublishCalls). */
  private readonly calls = new PublishCalls();
  /** Tells a silent SQS from a message too slow to upload within confirmTimeoutMs. */
  private readonly unansweredMessages = new UnansweredLedger();

  constructor(
    private readonly connection: SqsConnection,
    options: PublisherOptions = {},
  ) {
    checkSqsConnection(connection);
    this.options = resolvePublisherOptions(options);
    this.report = {
      transport: 'sqs',
      observer: this.options.observer,
      logger: guardLogger(this.options.logger ?? connection.logger),
      calls: this.calls,
    };
  }

  publish(messages: readonly OutboxMessage[], signal: AbortSignal): Promise<readonly PublishOutcome[]> {
    return observePublish(
      this.report,
      messages,
      (message) => this.destinationName(message),
      () => this.publishNow(messages, signal),
    );
  }

  /** The queue `message` goes to, as routed (URL or name; a URL's credentials left out); null: none. */
  destinationName(message: OutboxMessage): string | null {
    const queue = this.queueOf(message);
    return queue === null ? null : stripUrlCredentials(queue);
  }

  /** The event's destination, else the route of its type, else the default queue. */
  private queueOf(message: OutboxMessage): string | null {
    return message.destination ?? this.options.routes[message.type] ?? this.options.defaultDestination;
  }

  private async publishNow(
    messages: readonly OutboxMessage[],
    signal: AbortSignal,
  ): Promise<readonly PublishOutcome[]> {
    const outcomes: (PublishOutcome | undefined)[] = new Array(messages.length);
    if (this.closed) return messages.map((m) => closedOutcome(m.id, CLOSED));
    const byQueue = new Map<string, number[]>();
    messages.forEach((message, index) => {
      const queue = this.queueOf(message);
      if (queue === null) {
        outcomes[index] = {
          id: message.id,
          status: 'permanent',
          error: `no destination: the event names none, no route for type ${message.type}, no defaultDestination`,
        };
        return;
      }
      // A queue ARN or what is no queue name would be looked up for ever, never found (review 105).
      const fault = queueReferenceFault(queue);
      if (fault !== null) {
        outcomes[index] = { id: message.id, status: 'permanent', error: `destination ${fault}` };
        return;
      }
      byQueue.set(queue, [...(byQueue.get(queue) ?? []), index]);
    });
    // The call's one deadline (answerWithinMs): no request of it outlasts it, the deferred
    // messages' own deadlines included, so the relay never judges a silent SQS before the
    // publisher (review 95: one confirmTimeoutMs per deferred message outlasted it).
    // close() ends the call's requests as the caller's signal does: what it kept from SQS is
    // `unavailable` (closedOutcome), what the caller's signal did `retryable` (failedStatus).
    // Left to run, a request SQS did not answer held its socket and its caller until
    // confirmTimeoutMs past the publisher's close() (review 98).
    // Not AbortSignal.any: Node 20 kept every call's signal in the closing one (review 99).
    const stop = clearableAny([signal, this.closing.signal]);
    // Both are cleared when the call returns (clearableDeadline): none of its timers outlives it.
    const whole = clearableDeadline(this.answerWithinMs, stop.signal);
    // A request SQS has not answered by the deadline is abandoned: its messages are unavailable
    // (failedStatus), as those not sent before it.
    const requests = clearableDeadline(this.options.confirmTimeoutMs, whole.signal);
    try {
      return await this.publishCall(
        messages,
        outcomes,
        byQueue,
        signal,
        stop.signal,
        whole.signal,
        requests.signal,
      );
    } finally {
      requests.clear();
      whole.clear();
      stop.clear();
    }
  }

  /** publish() within the call's deadlines: `whole` (answerWithinMs) and `deadline` (confirmTimeoutMs). */
  private async publishCall(
    messages: readonly OutboxMessage[],
    outcomes: (PublishOutcome | undefined)[],
    byQueue: ReadonlyMap<string, number[]>,
    /** The caller's (the relay's) signal. */
    relay: AbortSignal,
    /** The caller's signal joined with the publisher's closing one. */
    stop: AbortSignal,
    whole: AbortSignal,
    deadline: AbortSignal,
  ): Promise<readonly PublishOutcome[]> {
    const call: CallRequests = {
      sent: 0,
      answered: 0,
      stop,
      relay,
      closed: () => this.closed,
      whole,
      endpointDown: false,
      abroad: new Map(),
    };
    const statusOf = (error: unknown) => failedStatus(error, deadline, call);
    await Promise.all(
      [...byQueue].map(([queue, indexes]) =>
        this.publishToQueue(queue, indexes, messages, outcomes, deadline, statusOf, call),
      ),
    );
    // The endpoint failed as an outage in this call: SQS or the network is down from here, and
    // another host failing meanwhile says nothing against its destination (not charged).
    if (call.endpointDown) {
      for (const [index, text] of call.abroad) {
        outcomes[index] = {
          id: messages[index]!.id,
          status: 'unavailable',
          error: `${text}; not charged: the connection's endpoint failed as an outage in the same publish call`,
        };
      }
    }
    return messages.map(
      (message, index) =>
        outcomes[index] ?? { id: message.id, status: 'retryable', error: 'no confirmation from SQS' },
    );
  }

  /** close() was called, or the connection (the caller's) was closed: nothing more is sent. */
  private get closed(): boolean {
    return this.closing.signal.aborted || this.connection.isClosed;
  }

  /**
   * Closes the publisher: a publish in flight is answered at once, what it has not had confirmed
   * `unavailable` (closedOutcome: no attempt spent), and has answered (and told the observer) before close() resolves. The connection
   * belongs to the caller and stays open.
   */
  async close(): Promise<void> {
    // A publish from now on is answered `unavailable` and reports nothing (observePublish); after
    // the connection's close() alone it still runs and reports (the publisher's owner did not close it).
    this.calls.close(CLOSED);
    this.closing.abort(closedError('SQS publisher'));
    await this.calls.settled(this.answerWithinMs);
  }

  private async publishToQueue(
    queue: string,
    indexes: readonly number[],
    messages: readonly OutboxMessage[],
    outcomes: (PublishOutcome | undefined)[],
    signal: AbortSignal,
    statusOf: (error: unknown) => FailedStatus,
    call: CallRequests,
  ): Promise<void> {
    let queueUrl: string;
    try {
      queueUrl = await this.connection.queueUrl(queue, signal);
    } catch (error) {
      const status = statusOf(error) === 'unavailable' ? 'unavailable' : 'retryable';
      // A queue name is looked up at the endpoint.
      if (status === 'unavailable' && !call.stop.aborted) call.endpointDown = true;
      const text = `queue ${stripUrlCredentials(queue)} could not be resolved: ${errorName(error) ?? 'Error'}: ${describeError(error)}`;
      for (const index of indexes) outcomes[index] = { id: messages[index]!.id, status, error: text };
      return;
    }
    // Requests for a queue on another host than the endpoint's: its failures are its own (charged).
    // Decided within the publish's deadline: an answer not known by then is the endpoint's.
    const foreign = await this.connection.foreignHost(queueUrl, signal);
    let foreignFailed = false;
    const fifo = isFifoQueue(queueUrl);
    const pending: Pending[] = [];
    for (const index of indexes) {
      const message = messages[index]!;
      const entry = encodeEntry(`m${index}`, message, fifo);
      const size = messageSize(entry.MessageBody, entry.MessageAttributes);
      const textFault = attributeTextFault(entry.MessageAttributes);
      if (textFault !== null) {
        outcomes[index] = { id: message.id, status: 'permanent', error: textFault };
      } else if (size > this.options.maxMessageBytes) {
        outcomes[index] = {
          id: message.id,
          status: 'permanent',
          error: `message is ${size} bytes with its attributes; SQS takes at most ${this.options.maxMessageBytes}`,
        };
      } else {
        pending.push({ index, message, entry, size });
      }
    }
    // The status each key's first failed message got; its later messages in the call share it.
    const failedKeys = new Map<string, FailedKey>();
    const keyOf = (p: Pending) => (fifo ? (p.entry.MessageGroupId ?? null) : null);
    const deferred = this.lastThoseUnanswered(pending, keyOf, fifo);
    while (pending.length > 0) {
      const batch = this.nextBatch(pending, failedKeys, keyOf, outcomes, deferred, call);
      if (batch.length === 0) continue;
      if (deferred.has(batch[0]!) && !call.whole.aborted) {
        if (await this.sendDeferred(queueUrl, batch, outcomes, call, foreign)) foreignFailed = true;
      } else if (signal.aborted) {
        // The deadline went on this queue's host, which failed an earlier request of it: charged.
        const charged = foreignFailed && !call.stop.aborted;
        const status = charged ? 'retryable' : statusOf(signal.reason);
        const late = call.whole.aborted
          ? `not sent: the publish call's deadline (answerWithinMs, ${this.answerWithinMs} ms) passed before its request`
          : `not sent: confirmTimeoutMs (${this.options.confirmTimeoutMs} ms) passed before its request`;
        const error = charged
          ? `${late}; ${abroad(foreign!)}`
          : closedUnder(call)
            ? CLOSED
            : status === 'unavailable'
              ? late
              : 'publish aborted';
        for (const p of [batch, pending].flat()) {
          outcomes[p.index] = { id: p.message.id, status, error };
          if (charged) call.abroad.set(p.index, late);
        }
        return;
      } else if (await this.sendBatch(queueUrl, batch, outcomes, signal, statusOf, call, foreign)) {
        foreignFailed = true;
      }
      for (const p of batch) {
        const key = keyOf(p);
        const status = outcomes[p.index]?.status;
        if (key !== null && status !== undefined && status !== 'sent' && !failedKeys.has(key))
          failedKeys.set(key, {
            status: status === 'unavailable' ? 'unavailable' : 'retryable',
            abroad: call.abroad.has(p.index),
          });
      }
    }
  }

  /**
   * Moves the messages whose last request went unanswered (and, on a FIFO queue, the later
   * messages of their keys, in order) to the end of `pending`, each to go alone (nextBatch): if one
   * is too slow to upload within confirmTimeoutMs, the others were sent before the deadline it
   * uses up, and those batched with it last time are told apart from it.
   */
  private lastThoseUnanswered(
    pending: Pending[],
    keyOf: (p: Pending) => string | null,
    fifo: boolean,
  ): ReadonlySet<Pending> {
    const heldKeys = new Set<string>();
    const first: Pending[] = [];
    const last: Pending[] = [];
    for (const p of pending) {
      const key = keyOf(p);
      const held = this.unansweredMessages.wasUnanswered(p.message.id) || (key !== null && heldKeys.has(key));
      if (held && key !== null) heldKeys.add(key);
      (held ? last : first).push(p);
    }
    // Without keys, the smallest first: the one too slow is most likely the largest.
    if (!fifo) last.sort((a, b) => a.size - b.size);
    if (last.length > 0) pending.splice(0, pending.length, ...first, ...last);
    return new Set(last);
  }

  /**
   * Takes the next batch off `pending`: at most 10 entries within maxBatchBytes, skipping failed
   * keys; a message whose last request went unanswered alone.
   */
  private nextBatch(
    pending: Pending[],
    failedKeys: ReadonlyMap<string, FailedKey>,
    keyOf: (p: Pending) => string | null,
    outcomes: (PublishOutcome | undefined)[],
    deferred: ReadonlySet<Pending>,
    call: CallRequests,
  ): Pending[] {
    const batch: Pending[] = [];
    let bytes = 0;
    while (pending.length > 0 && batch.length < MAX_BATCH_ENTRIES) {
      const next = pending[0]!;
      const key = keyOf(next);
      const earlier = key === null ? undefined : failedKeys.get(key);
      if (earlier !== undefined) {
        pending.shift();
        // An outage (unavailable) spends no attempt of the key's later messages either.
        const error = `an earlier message of ordering key ${key} was not sent`;
        outcomes[next.index] = { id: next.message.id, status: earlier.status, error };
        if (earlier.abroad) call.abroad.set(next.index, error);
        continue;
      }
      // A message whose last request went unanswered goes alone: if it is too slow to upload,
      // its neighbours are not held up (and charged) with it.
      const alone = this.unansweredMessages.wasUnanswered(next.message.id);
      // Deferred messages go on deadlines of their own (sendDeferred): never in a batch of others.
      const crossing = batch.length > 0 && deferred.has(next) !== deferred.has(batch[0]!);
      if (batch.length > 0 && (alone || crossing || bytes + next.size > this.options.maxBatchBytes)) break;
      pending.shift();
      batch.push(next);
      bytes += next.size;
      if (alone) break;
    }
    return batch;
  }

  /**
   * The messages lastThoseUnanswered deferred (a message whose last request went unanswered, alone,
   * and on a FIFO queue its key's later messages), each request on a deadline of its own
   * (confirmTimeoutMs, not what the batches' deadline has left: review 33), within the call's one
   * deadline (answerWithinMs: review 95); one that deadline cut, or its probe, is not charged, and
   * those not sent by then are `unavailable`. Sent only while SQS
   * answers this call (or as its first request); unanswered again, it is charged (`retryable`:
   * too slow to upload within confirmTimeoutMs, its size on this link) only when SQS is up: it
   * answered another request of this call, or a probe (GetQueueAttributes) now. In a silent outage
   * nothing answers, and it stays `unavailable` (review 19's contract, review 33's second outage).
   */
  private async sendDeferred(
    queueUrl: string,
    batch: readonly Pending[],
    outcomes: (PublishOutcome | undefined)[],
    call: CallRequests,
    foreign: string | null,
  ): Promise<boolean> {
    if (call.sent > 0 && call.answered === 0) {
      for (const p of batch) {
        outcomes[p.index] = {
          id: p.message.id,
          status: 'unavailable',
          error: "not sent: SQS answered none of this publish call's requests",
        };
      }
      return false;
    }
    const deadline = clearableDeadline(this.options.confirmTimeoutMs, call.whole);
    try {
      return await this.sendOwn(queueUrl, batch, outcomes, call, foreign, deadline.signal);
    } finally {
      deadline.clear();
    }
  }

  /** sendDeferred's request, on its own deadline `own`. */
  private async sendOwn(
    queueUrl: string,
    batch: readonly Pending[],
    outcomes: (PublishOutcome | undefined)[],
    call: CallRequests,
    foreign: string | null,
    own: AbortSignal,
  ): Promise<boolean> {
    // Only a message alone whose last request went unanswered too is charged (its key's later
    // messages, deferred with it, are remembered when unanswered and go alone next time). On
    // another host the rule of that host's failures charges it (sendBatch).
    const suspect =
      foreign === null && batch.length === 1 && this.unansweredMessages.wasUnanswered(batch[0]!.message.id);
    const charge = suspect
      ? async (): Promise<boolean> =>
          !call.whole.aborted && (call.answered > 0 || (await this.answering(queueUrl, call.whole)))
      : undefined;
    return this.sendBatch(
      queueUrl,
      batch,
      outcomes,
      own,
      (e) => failedStatus(e, own, call),
      call,
      foreign,
      charge,
    );
  }

  /** Whether SQS answers a small request (GetQueueAttributes) now, within confirmTimeoutMs (at most 5 s). */
  private async answering(queueUrl: string, stop: AbortSignal): Promise<boolean> {
    const probe = clearableDeadline(Math.min(this.options.confirmTimeoutMs, PROBE_MS), stop);
    const deadline = probe.signal;
    try {
      await this.connection.request(
        (sqs, abortSignal) =>
          sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }), {
            abortSignal,
          }),
        deadline,
      );
      return true;
    } catch (error) {
      return (
        (error as { $metadata?: { httpStatusCode?: unknown } } | null)?.$metadata?.httpStatusCode !==
        undefined
      );
    } finally {
      probe.clear();
    }
  }

  private async sendBatch(
    queueUrl: string,
    batch: readonly Pending[],
    outcomes: (PublishOutcome | undefined)[],
    signal: AbortSignal,
    statusOf: (error: unknown) => FailedStatus,
    call: CallRequests,
    foreign: string | null,
    charge?: () => Promise<boolean>,
  ): Promise<boolean> {
    let successful: readonly SendMessageBatchResultEntry[];
    let failed: readonly { Id?: string; Code?: string; Message?: string; SenderFault?: boolean }[];
    // Only the endpoint's answers tell whether SQS is up (sendDeferred).
    if (foreign === null) call.sent += 1;
    try {
      const entries = batch.map((p) => p.entry);
      const output = await this.connection.request(
        (sqs, abortSignal) =>
          sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }), { abortSignal }),
        signal,
      );
      successful = output.Successful ?? [];
      failed = output.Failed ?? [];
      if (foreign === null) call.answered += 1;
      this.unansweredMessages.answered(batch.map((p) => p.message.id));
    } catch (error) {
      const given = statusOf(error);
      // Another host than the endpoint's failing (refused, silent, 5xx, a refusal of this
      // destination's permissions) is that destination's fault: charged, never an SQS outage. The
      // connection's credentials failing (its provider, or any host refusing them: an expired
      // token) are the connection's, whatever the host; a request close() ended is no failure of
      // the host's (closedOutcome: unavailable, review 148).
      const abroadFailed =
        foreign !== null && given === 'unavailable' && !isCredentialsFailure(error) && !closedUnder(call);
      const status = abroadFailed ? 'retryable' : given;
      const failure = `SendMessageBatch to ${stripUrlCredentials(queueUrl)} failed: ${errorName(error) ?? 'Error'}: ${describeError(error)}`;
      const text = abroadFailed ? `${failure}; ${abroad(foreign)}` : failure;
      // Unanswered by the deadline: a silent SQS (unavailable); remembered, so the message goes
      // alone next time (sendDeferred), where it is charged if SQS is up but does not answer it.
      const unanswered = status === 'unavailable' && signal.aborted;
      if (unanswered) for (const p of batch) this.unansweredMessages.remember(p.message.id);
      const charged = unanswered && charge !== undefined && (await charge());
      // The endpoint failing as an outage: the same call's other hosts' failures are not charged.
      if (foreign === null && status === 'unavailable' && !charged && !call.stop.aborted)
        call.endpointDown = true;
      if (abroadFailed) for (const p of batch) call.abroad.set(p.index, failure);
      for (const p of batch) {
        outcomes[p.index] = charged
          ? retryable(
              p.message,
              `${text}, alone, on its own deadline, while SQS answers: too slow to upload within confirmTimeoutMs (its size on this link?)`,
            )
          : { id: p.message.id, status, error: text };
      }
      return abroadFailed;
    }
    const byEntryId = new Map(batch.map((p) => [p.entry.Id, p]));
    for (const entry of successful) {
      const p = entry.Id === undefined ? undefined : byEntryId.get(entry.Id);
      if (p) outcomes[p.index] = { id: p.message.id, status: 'sent' };
    }
    for (const entry of failed) {
      const p = entry.Id === undefined ? undefined : byEntryId.get(entry.Id);
      if (!p) continue;
      const error = `SQS rejected the entry: ${entry.Code ?? 'unknown code'}: ${entry.Message ?? ''}`.trim();
      outcomes[p.index] = isPermanentEntryCode(entry.Code)
        ? { id: p.message.id, status: 'permanent', error }
        : retryable(p.message, error);
    }
    return false;
  }
}

type FailedStatus = Exclude<PublishOutcome['status'], 'sent'>;

/** How an ordering key's first failed message of a call failed: its later messages share it. */
interface FailedKey {
  readonly status: FailedStatus;
  /** Charged as another host's failure (CallRequests.abroad). */
  readonly abroad: boolean;
}

/** The SendMessageBatch requests of one publish call, and the relay's signal that stops it. */
interface CallRequests {
  sent: number;
  answered: number;
  /** The relay's signal joined with the publisher's closing one: the call is given up. */
  readonly stop: AbortSignal;
  /** The relay's own signal: aborted, it stopped waiting for the call and discards its answer. */
  readonly relay: AbortSignal;
  /** The publisher (or its connection) was closed. */
  readonly closed: () => boolean;
  /** The call's one deadline (answerWithinMs, ended by `stop` too): every request of it ends by it. */
  readonly whole: AbortSignal;
  /** A request to the connection's endpoint failed as an outage in this call. */
  endpointDown: boolean;
  /**
   * Messages charged (`retryable`) as another host's failure, with their error text without the
   * charge: `unavailable` after all when the endpoint failed in the same call (endpointDown).
   */
  readonly abroad: Map<number, string>;
}

/** The longest a probe of a silent SQS waits (less when confirmTimeoutMs is shorter). */
const PROBE_MS = 5_000;

/**
 * The outcome of messages whose request failed with `error`: `unavailable` when the publish's
 * own deadline (`confirmTimeoutMs`) or the publisher's close() (or its connection's: closedOutcome)
 * ended it, not the relay (`relay`: its lease, its shutdown).
 * Nothing in a message makes SQS withhold its answer, while a network that drops packets
 * withholds every one: spending attempts on that turned events FAILED during a silent outage
 * (review 19), where a refused connection spent none. A request abandoned at another deadline
 * (a shared queue-name lookup's setupTimeoutMs: abandonedError's cause) is unavailable by
 * publishStatus too (review 22). An answer SQS gave (an HTTP status) as the deadline passed, and
 * everything else: publishStatus; a publish the relay stopped: retryable (publishBatch stopped
 * waiting at the relay's abort and discards the answer).
 */
function failedStatus(
  error: unknown,
  deadline: AbortSignal,
  call: Pick<CallRequests, 'relay' | 'closed'>,
): FailedStatus {
  const answered = (error as { $metadata?: { httpStatusCode?: unknown } } | null)?.$metadata?.httpStatusCode;
  if (call.relay.aborted) return 'retryable';
  if ((call.closed() || deadline.aborted) && answered === undefined) return 'unavailable';
  return publishStatus(error);
}

/**
 * The publisher's close() (or its connection's) ended the call, not the relay: what it kept from
 * SQS is `unavailable` (closedOutcome), wherever its requests went.
 */
function closedUnder(call: Pick<CallRequests, 'relay' | 'closed'>): boolean {
  return call.closed() && !call.relay.aborted;
}

/** Why a failure of a queue on another host is charged: `foreign` is connection.foreignHost's text. */
function abroad(foreign: string): string {
  return `the queue's host ${foreign}: a failure of this destination, not an SQS outage (an attempt spent)`;
}

function retryable(message: OutboxMessage, error: string): PublishOutcome {
  return { id: message.id, status: 'retryable', error };
}
