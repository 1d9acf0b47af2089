import { checkKafkaConnection } from './options';
import { type Logger, type OutboxMessage, type Publisher, type PublishOutcome } from '@ferry/core';
import {
  closedOutcome,
  guardLogger,
  MAX_TIMER_MS,
  observePublish,
  PublishCalls,
  UnansweredLedger,
  type PublishReport,
} from '@ferry/core/transport';
import type { ProducedRecord, SequencedProducer } from './client/types';
import type { KafkaConnection } from './connection';
import {
  classifyKafkaError,
  closedError,
  describeError,
  hasKafkaType,
  markUnavailable,
  transportError,
  unavailableError,
  type ErrorClassification,
} from './errors';
import {
  resolvePublisherOptions,
  type PublisherOptions,
  type ResolvedPublisherOptions,
} from './publisherOptions';
import {
  boundedClose,
  clientRetryCeilingMs,
  deadlineIn,
  deadlineText,
  deadlineWithin,
  missedDeadline,
  passed,
  raceAbort,
  throwIfAborted,
  type Deadline,
} from './race';
import { requestChunks } from './requestChunks';
import { InTurn } from './inTurn';
import { TopicPresence } from './topicPresence';
import { remember, UNANSWERED_KEPT } from './kept';
import { encodeOutboxMessage, KAFKA_SYSTEM, topicOf, type OutboundRecord } from './wire';

const retryable = (id: string, error: string): PublishOutcome => ({ id, status: 'retryable', error });

/**
 * The deadlines of one publish: `whole`, the call's one (answerWithinMs), which no wait of it
 * outlasts (the producer's connect and replacement, each send's own deadline, a probe: review 95);
 * `sends`, the one its sends share (its chunks; made at the first send when the publish is one
 * send), so a slow cluster keeps a publish confirmTimeoutMs, not one per chunk.
 */
interface PublishBudget {
  readonly whole: Deadline;
  sends?: Deadline;
}

/** The longest the probe of a cluster that left a record unanswered twice waits (less when confirmTimeoutMs is shorter). */
const PROBE_MS = 5_000;

/** Connection-level failures are `unavailable` (no attempt spent); others by retriability. */
const failureStatus = (failure: ErrorClassification) =>
  failure.unavailable ? 'unavailable' : failure.retriable ? 'retryable' : 'permanent';

/**
 * Outbox publisher over an idempotent producer (acks -1; with kafkajs one request in flight per
 * broker, so per-key order survives retries). A message is `sent` only once the `sendBatch`
 * carrying it resolved; the relay's abort reports it `retryable`; a producer disconnect, a send
 * the cluster did not answer by its deadline (unanswered) and what close() kept from being sent or
 * confirmed `unavailable`.
 */
export class KafkaPublisher implements Publisher {
  /** OpenTelemetry's messaging.system of the relay's publish spans. */
  readonly system = KAFKA_SYSTEM;

  /**
   * The longest publish() takes (Publisher.answerWithinMs): the call's one deadline, which every
   * wait of it shares (PublishBudget.whole): room for the producer's connect (connectionTimeoutMs),
   * the wait for a replaced producer and a send (one confirmTimeoutMs each); what it leaves unsent
   * is `unavailable`.
   */
  get answerWithinMs(): number {
    return Math.min(MAX_TIMER_MS, 2 * this.options.confirmTimeoutMs + this.connectionTimeoutMs);
  }
  private readonly connectionTimeoutMs: number;
  private readonly options: ResolvedPublisherOptions;
  private readonly report: PublishReport;
  private readonly logger: Logger;
  private readonly producer: SequencedProducer;
  private connecting: Promise<void> | null = null;
  private closing: Promise<void> | null = null;
  /** Aborted by close(): a connect in flight fails at once and nothing reconnects. */
  private readonly stopping = new AbortController();
  /** Aborted when the producer disconnects, so every in-flight send is reported not sent. */
  private inFlight = new AbortController();
  /** The publish() calls in flight, which close() waits for (PublishCalls). */
  private readonly calls = new PublishCalls();
  /** Client sends that have not settled yet (they may outlive the outcome we reported). */
  private readonly unsettled = new Set<Promise<unknown>>();
  /**
   * Sends reported not sent while the client may still deliver them (it retries a request across
   * a broker restart). The relay claims those rows again; no newer send starts before these
   * settled, or the old records would land after the ones that follow them.
   */
  private readonly abandoned = new Set<Promise<void>>();
  /** Topics a send failed on, checked before the next send to them (topicPresence.ts). */
  private readonly topics: TopicPresence;
  /** Tells a silent cluster from a record too slow to send (at most UNANSWERED_KEPT records). */
  private readonly unansweredRecords = new UnansweredLedger(UNANSWERED_KEPT);
  /**
   * Records of a batch the cluster refused whose one-at-a-time sends have not told them apart yet
   * (at most UNANSWERED_KEPT, oldest dropped): sent again, they go one at a time at once, so a
   * refused record among them is found even when each refusal costs more than a deadline.
   */
  private readonly isolating = new Set<string>();
  /**
   * Records of a send of several the cluster left unanswered (at most UNANSWERED_KEPT, oldest
   * dropped): sent again, they go one at a time, sharing the publish's one deadline (sendApart),
   * so a record too slow to send is told apart from its neighbours without a deadline per record
   * (review 36: after a silent outage those outlasted the relay's lease on a slow cluster).
   */
  private readonly unansweredTogether = new Set<string>();

  constructor(connection: KafkaConnection, options: PublisherOptions = {}) {
    checkKafkaConnection(connection);
    this.options = resolvePublisherOptions(options);
    this.connectionTimeoutMs = connection.options.connectionTimeoutMs;
    this.logger = guardLogger(this.options.logger ?? connection.logger);
    this.report = {
      transport: 'kafka',
      observer: this.options.observer,
      logger: this.logger,
      calls: this.calls,
    };
    const retryCeilingMs = clientRetryCeilingMs(this.options.closeTimeoutMs);
    this.topics = new TopicPresence(connection, retryCeilingMs);
    this.producer = connection.driver.producer({
      retries: this.options.producerRetries,
      signal: this.stopping.signal,
      retryCeilingMs,
      replaced: (cause) =>
        this.logger.info({ err: describeError(cause) }, 'Kafka producer replaced after a failed send'),
    });
    this.producer.onDisconnect(() => {
      this.connecting = null;
      this.inFlight.abort(unavailableError('Kafka producer disconnected'));
      this.inFlight = new AbortController();
    });
  }

  /** Connects the producer; safe to call twice or concurrently. Throws FERRY_TRANSPORT_ERROR / FERRY_CLOSED. */
  async connect(): Promise<void> {
    if (this.closing) throw closedError('Kafka publisher');
    this.connecting ??= this.producer.connect().catch((error: unknown) => {
      this.connecting = null;
      // Whatever the client says (a refused or silent broker, kafkajs's "Broker not connected"
      // after a silent one, TLS or SASL settings the listener refuses), the cluster could not be
      // reached: no message's fault, so no attempt is spent and the relay's circuit opens.
      throw markUnavailable(transportError('connecting the Kafka producer failed', error));
    });
    await this.connecting;
  }

  /**
   * connect(), waited for until the publish call's one deadline (`whole`): past it nothing is sent
   * (`unavailable`); the connect goes on for the next publish. The call's signal (and close())
   * ends the wait at once, as every other wait of the call (review 96: a relay's aborted publish
   * waited on for a connect to a silent cluster).
   */
  private async connectWithin(whole: Deadline, signal: AbortSignal): Promise<void> {
    try {
      await raceAbort(this.connect(), [signal, this.stopping.signal], 'connecting the Kafka producer', whole);
    } catch (error) {
      if (!missedDeadline(error, whole)) throw error;
      throw unavailableError(
        `not sent: the Kafka producer did not connect within the publish's deadline (answerWithinMs, ${whole.ms} ms)`,
      );
    }
  }

  /** The topic `message` goes to (its destination, else its type's route, else the default); null: none. */
  destinationName(message: OutboxMessage): string | null {
    return topicOf(message, this.options.routing);
  }

  publish(messages: readonly OutboxMessage[], signal: AbortSignal): Promise<readonly PublishOutcome[]> {
    return observePublish(
      this.report,
      messages,
      (message) => this.destinationName(message),
      () => this.publishNow(messages, signal),
    );
  }

  private async publishNow(
    messages: readonly OutboxMessage[],
    signal: AbortSignal,
  ): Promise<readonly PublishOutcome[]> {
    const outcomes = new Map<string, PublishOutcome>();
    const records: OutboundRecord[] = [];
    for (const message of messages) {
      const encoded = encodeOutboxMessage(message, this.options.routing, this.options.maxMessageBytes);
      if (encoded.ok) records.push(encoded.record);
      else outcomes.set(message.id, { id: message.id, status: 'permanent', error: encoded.error });
    }
    if (records.length > 0) {
      for (const outcome of await this.sendChunks(records, signal)) outcomes.set(outcome.id, outcome);
    }
    return messages.map((message) => outcomes.get(message.id) ?? retryable(message.id, 'no outcome'));
  }

  /**
   * Sends `records` in order, in sends the broker takes (requestChunks: at most maxMessageBytes
   * each). The sends share one deadline, confirmTimeoutMs from the first: past it the chunks not
   * sent yet are `unavailable`, so a slow cluster costs a publish confirmTimeoutMs (what it sent
   * is `sent`), never a deadline per chunk past the relay's lease. A later send leaves out the
   * messages of a key an earlier one did not send (per-key order holds) and, once the cluster
   * was unavailable, everything.
   */
  private async sendChunks(
    records: readonly OutboundRecord[],
    signal: AbortSignal,
  ): Promise<PublishOutcome[]> {
    const chunks = requestChunks(records, this.options.maxMessageBytes);
    const budget: PublishBudget = { whole: deadlineIn(this.answerWithinMs) };
    if (chunks.length === 1) return this.sendAll(records, signal, budget);
    budget.sends = deadlineWithin(this.options.confirmTimeoutMs, budget.whole);
    const outcomes: PublishOutcome[] = [];
    const turn = new InTurn();
    for (const chunk of chunks) {
      if (!turn.stopped && passed(budget.sends))
        turn.stop(
          `not sent: ${budget.sends.cutBy === undefined ? `the publish's confirmTimeoutMs (${budget.sends.ms} ms)` : deadlineText(budget.sends)} passed before its turn`,
        );
      const ready: OutboundRecord[] = [];
      for (const record of chunk) {
        const held = turn.held(record);
        if (held === null) ready.push(record);
        else outcomes.push(held);
      }
      if (ready.length === 0) continue;
      const sent = await this.sendAll(ready, signal, budget);
      ready.forEach((record, index) => {
        outcomes.push(sent[index]!);
        turn.learn(record, sent[index]!);
      });
    }
    return outcomes;
  }

  /**
   * Sends `records` by one deadline (`budget.sends`, else confirmTimeoutMs from the producer's
   * connect): the check of their suspect topics, the wait for sends given up earlier and the send
   * share it, so a silent cluster costs the publish confirmTimeoutMs, not a check's and then a send's.
   */
  private async sendAll(
    records: readonly OutboundRecord[],
    signal: AbortSignal,
    budget: PublishBudget,
  ): Promise<PublishOutcome[]> {
    if (this.closing) return records.map((record) => closedOutcome(record.id));
    if (signal.aborted)
      return records.map((record) => retryable(record.id, 'publish aborted before sending'));
    const topics = new Set(records.map((record) => record.topic));
    let deadline: Deadline | undefined = budget.sends;
    const timing: SendTiming = {};
    try {
      await this.connectWithin(budget.whole, signal);
      await this.producerReady(signal, budget.whole);
      if (deadline === undefined) {
        deadline = deadlineWithin(this.options.confirmTimeoutMs, budget.whole);
        budget.sends = deadline;
      }
      const missing = await this.topics.missing(topics, [signal, this.inFlight.signal], deadline);
      if (missing.size > 0) return await this.sendPresent(records, missing, signal, budget);
      // After the topic check: a suspect topic among them is still checked first (review 17).
      const suspects = new Set(records.filter((r) => this.isolating.has(r.id)).map((r) => r.id));
      if (records.length > 1 && suspects.size > 0)
        return await this.sendOneByOne(records, signal, suspects, budget.whole);
      if (records.length > 1 && records.some((r) => this.unansweredTogether.has(r.id)))
        return await this.sendApart(records, signal, deadline, budget.whole);
      await this.send(records, signal, deadline, timing);
      this.topics.present(topics);
      return records.map((record) => ({ id: record.id, status: 'sent' }));
    } catch (error) {
      const failure = classifyKafkaError(error);
      if (
        !failure.unavailable &&
        deadline !== undefined &&
        !signal.aborted &&
        missedDeadline(error, deadline)
      )
        return await this.unanswered(
          records,
          error,
          [signal, this.inFlight.signal],
          hadMost(deadline, timing),
          budget.whole,
        );
      // Unavailable: nothing of the batch can go (the cluster). Retryable with one topic: the
      // topic's (e.g. not there yet). Otherwise some messages may be to blame, not all.
      if (failure.unavailable || records.length === 1 || (failure.retriable && topics.size === 1)) {
        if (failure.retriable && !failure.unavailable && topics.size === 1)
          this.topics.suspect(records[0]!.topic);
        const status = failureStatus(failure);
        return records.map((record) => ({ id: record.id, status, error: failure.message }));
      }
      return this.sendOneByOne(records, signal, null, budget.whole);
    }
  }

  /**
   * The outcomes of records whose send the cluster did not answer within its deadline:
   * `unavailable` (no attempt spent), since a broker gone silent (a network that drops its
   * packets, a paused or overloaded node) withholds every answer and spending an attempt on each
   * turned events FAILED during such an outage. A record's size does make its send slow (a large
   * one over a slow link), and unavailable for ever it would never be charged nor FAILED
   * (review15-slowUpload), so:
   * - a send of several records is never charged: one of them may be the slow one, and its
   *   neighbours were charged with it (unansweredCharges). They go one at a time next time, within
   *   the publish's one deadline (sendApart, `unansweredTogether`);
   * - nor is a record whose send had less than most of confirmTimeoutMs (`chargeable`: a later
   *   record of a publish whose deadline is shared);
   * - a record sent alone, unanswered again after the cluster answered other sends since its last
   *   try, is `retryable` only if the cluster answers a small request now (a probe, at most
   *   PROBE_MS): the cluster is up and this record cannot be sent within confirmTimeoutMs. In a
   *   second silent outage nothing answers, and it stays `unavailable` (unansweredCharges).
   * A topic the cluster does not have also keeps the client waiting (it retries the topic's
   * metadata), so the records' topics are suspect: the next publish to them checks them first and
   * charges a missing one (`retryable`).
   */
  private async unanswered(
    records: readonly OutboundRecord[],
    error: unknown,
    signals: readonly AbortSignal[],
    /** False when the send had less than most of confirmTimeoutMs (hadMost): never charged then. */
    chargeable: boolean,
    /** The publish call's one deadline: a probe it cuts short charges nothing. */
    whole: Deadline,
  ): Promise<PublishOutcome[]> {
    for (const record of records) this.topics.suspect(record.topic);
    const reason = `${describeError(error)}: the Kafka cluster did not answer`;
    const unavailable = records.map((record): PublishOutcome => ({
      id: record.id,
      status: 'unavailable',
      error: reason,
    }));
    if (records.length > 1) {
      for (const record of records) {
        this.unansweredRecords.remember(record.id);
        remember(this.unansweredTogether, record.id);
      }
      return unavailable;
    }
    const record = records[0]!;
    if (!chargeable) {
      this.unansweredRecords.remember(record.id);
      return unavailable;
    }
    if (!this.unansweredRecords.unansweredAgain(record.id)) return unavailable;
    const probe = deadlineWithin(Math.min(this.options.confirmTimeoutMs, PROBE_MS), whole);
    if (!(await this.topics.answering([...signals, this.stopping.signal], probe))) return unavailable;
    return [
      retryable(
        record.id,
        `${describeError(error)}, again, alone, while the cluster answers (other sends since its last try, a probe now): ` +
          'too slow to send within confirmTimeoutMs (its size on this link?)',
      ),
    ];
  }

  /**
   * Sends the messages to topics the cluster has; those to a `missing` topic are `retryable`
   * without a send, and so are the later messages of their keys, so per-key order holds.
   */
  private async sendPresent(
    records: readonly OutboundRecord[],
    missing: ReadonlySet<string>,
    signal: AbortSignal,
    budget: PublishBudget,
  ): Promise<PublishOutcome[]> {
    const heldKeys = new Set<string>();
    const held = new Map<string, PublishOutcome>();
    const rest: OutboundRecord[] = [];
    for (const record of records) {
      const reason = missing.has(record.topic)
        ? `topic ${record.topic} does not exist in the Kafka cluster`
        : record.key !== null && heldKeys.has(record.key)
          ? 'an earlier message with the same key was not sent'
          : null;
      if (reason === null) {
        rest.push(record);
        continue;
      }
      if (record.key !== null) heldKeys.add(record.key);
      held.set(record.id, retryable(record.id, reason));
    }
    const sent = rest.length > 0 ? await this.sendAll(rest, signal, budget) : [];
    const outcomes = new Map(sent.map((outcome) => [outcome.id, outcome]));
    return records.map((record) => held.get(record.id) ?? outcomes.get(record.id)!);
  }

  /**
   * The records of a send of several that the cluster left unanswered (`unansweredTogether`), and
   * those sent with them now, one at a time, in order, within the publish's one `deadline`: the
   * one too slow to send is told apart from its neighbours (each answered is `sent`), and the
   * publish is still bounded by confirmTimeoutMs after a silent outage (one deadline per record
   * outlasted the relay's lease on a slow cluster: review 36). A record unanswered ends the sends
   * (the rest are `unavailable`); it is charged only when its send had most of the deadline
   * (unanswered, `chargeable`). Per-key order holds: a key's later records are not sent after one
   * of it that was not.
   */
  private async sendApart(
    records: readonly OutboundRecord[],
    signal: AbortSignal,
    deadline: Deadline,
    whole: Deadline,
  ): Promise<PublishOutcome[]> {
    const outcomes: PublishOutcome[] = [];
    const turn = new InTurn();
    for (const record of records) {
      const held = turn.held(record);
      if (held !== null) {
        outcomes.push(held);
        continue;
      }
      const timing: SendTiming = {};
      let outcome: PublishOutcome;
      try {
        await this.send([record], signal, deadline, timing);
        this.topics.present([record.topic]);
        this.unansweredTogether.delete(record.id);
        outcome = { id: record.id, status: 'sent' };
      } catch (error) {
        ({ outcome } = await this.failedAlone(record, error, signal, deadline, timing, whole));
      }
      outcomes.push(outcome);
      turn.learn(record, outcome);
    }
    return outcomes;
  }

  /**
   * After a batch failure that may be some messages' own (permanent, or retryable with several
   * topics, e.g. one the broker does not have), finds the offending messages by sending one at a
   * time, in order, so that they do not fail their neighbours. Once a key had a failure its later
   * messages are not sent, so per-key order holds; once a topic failed retryably, its later
   * messages are not tried (each try would wait for the client to give up on the topic again);
   * once the cluster is unavailable, nothing more is tried.
   */
  private async sendOneByOne(
    records: readonly OutboundRecord[],
    signal: AbortSignal,
    /** The records a refused batch held (remembered, `isolating`); null: all of them (this batch was refused). */
    suspects: ReadonlySet<string> | null,
    /** The publish call's one deadline: each record's waits end by it too (review 95). */
    whole: Deadline,
  ): Promise<PublishOutcome[]> {
    const turn = new InTurn();
    const outcomes: PublishOutcome[] = [];
    for (const record of records) this.isolating.delete(record.id);
    for (const record of records) {
      const held = turn.held(record);
      if (held !== null) {
        outcomes.push(held);
        continue;
      }
      // Each its own deadline, from when the producer a failed send retired was replaced: one
      // shared by these sends, or charged with the replacement, left the records after a refused
      // one unsendable on a slow cluster, publish after publish (review 15).
      let deadline: Deadline | undefined;
      const timing: SendTiming = {};
      try {
        await this.producerReady(signal, whole);
        deadline = deadlineWithin(this.options.confirmTimeoutMs, whole);
        await this.send([record], signal, deadline, timing);
        this.topics.present([record.topic]);
        outcomes.push({ id: record.id, status: 'sent' });
      } catch (error) {
        const { outcome, topicFailed } = await this.failedAlone(
          record,
          error,
          signal,
          deadline,
          timing,
          whole,
        );
        outcomes.push(outcome);
        turn.learn(record, outcome, topicFailed);
      }
    }
    // Nothing refused was found before the sends stopped (a replacement or the cluster too slow):
    // the batch's refusal is unexplained, so its records not sent go one at a time next time too
    // (only those a refused batch held: new records that joined them stay batched; review 17).
    if (!outcomes.some((outcome) => outcome.status === 'permanent' || outcome.status === 'retryable'))
      records.forEach((record, index) => {
        if (outcomes[index]!.status === 'unavailable' && (suspects === null || suspects.has(record.id)))
          remember(this.isolating, record.id);
      });
    return outcomes;
  }

  /**
   * The outcome of one record whose send (alone) failed with `error`: unanswered within its
   * `deadline`, as `unanswered` tells (charged only when the send had most of it); otherwise by
   * the error's class. `topicFailed`: a retryable failure of a record alone is its topic's (one the
   * cluster does not have yet, say), which is then checked before the next send to it.
   */
  private async failedAlone(
    record: OutboundRecord,
    error: unknown,
    signal: AbortSignal,
    deadline: Deadline | undefined,
    timing: SendTiming,
    whole: Deadline,
  ): Promise<{ outcome: PublishOutcome; topicFailed: boolean }> {
    const failure = classifyKafkaError(error);
    if (
      !failure.unavailable &&
      !signal.aborted &&
      deadline !== undefined &&
      missedDeadline(error, deadline)
    ) {
      const chargeable = hadMost(deadline, timing);
      const [outcome] = await this.unanswered(
        [record],
        error,
        [signal, this.inFlight.signal],
        chargeable,
        whole,
      );
      return { outcome: outcome!, topicFailed: false };
    }
    const topicFailed = failure.retriable && !failure.unavailable;
    if (topicFailed) this.topics.suspect(record.topic);
    return {
      outcome: {
        id: record.id,
        status: failureStatus(failure),
        error: refusalReason(record, error, failure),
      },
      topicFailed,
    };
  }

  /**
   * Waits until the producer retired by a failed send was replaced (SequencedProducer.ready), at
   * most confirmTimeoutMs, before the send's own deadline starts: the replacement (three round
   * trips) is not charged to the send, which left the records after a refused one unsendable on
   * a slow cluster (review 15), and a silent cluster still costs a publish confirmTimeoutMs
   * (past it: `unavailable`, nothing sent; review 16).
   */
  private async producerReady(signal: AbortSignal, whole: Deadline): Promise<void> {
    const replacing = this.producer.ready();
    if (replacing === null) return;
    const deadline = deadlineWithin(this.options.confirmTimeoutMs, whole);
    try {
      await raceAbort(
        replacing,
        [signal, this.inFlight.signal, this.stopping.signal],
        'replacing the Kafka producer',
        deadline,
      );
    } catch (error) {
      if (!missedDeadline(error, deadline)) throw error;
      throw unavailableError(
        `not sent: the Kafka producer that replaces one whose send failed did not connect within ${deadlineText(deadline)}`,
      );
    }
  }

  /**
   * One `sendBatch`; rejects on broker error, `deadline`, abort or producer disconnect. `timing`
   * learns when the producer took the send (behind an earlier send, a new producer's connect).
   */
  private async send(
    records: readonly OutboundRecord[],
    signal: AbortSignal,
    deadline: Deadline,
    timing: SendTiming = {},
  ): Promise<void> {
    const byTopic = new Map<string, ProducedRecord[]>();
    for (const record of records) {
      let entry = byTopic.get(record.topic);
      if (!entry) {
        entry = [];
        byTopic.set(record.topic, entry);
      }
      entry.push({ key: record.key, value: record.value, headers: record.headers });
    }
    const batches = [...byTopic].map(([topic, topicRecords]) => ({ topic, records: topicRecords }));
    const signals = [signal, this.inFlight.signal];
    await this.afterAbandoned(signals, deadline);
    // A publish aborted, or the publisher closed, while it waited (an earlier send, a topic
    // check): the records are not handed to the producer, whose send would outlive the outcome.
    throwIfAborted([...signals, this.stopping.signal], 'send');
    if (passed(deadline)) throw notTaken(deadline);
    // Given up (reported not sent) before the producer took it (behind an earlier send or a new
    // producer's connect): never handed to the client, or it would land after its own retry.
    const givenUp = new AbortController();
    let handed = false;
    const sending = this.producer.send(batches, {
      givenUp: givenUp.signal,
      handed: () => {
        handed = true;
        timing.handedAt = performance.now();
      },
    });
    const settled = sending.then(
      () => undefined,
      () => undefined,
    );
    this.unsettled.add(settled);
    void settled.then(() => this.unsettled.delete(settled));
    try {
      await raceAbort(sending, signals, 'send', deadline);
      this.unansweredRecords.answered(records.map((record) => record.id));
    } catch (error) {
      givenUp.abort(error);
      if (!handed) throw missedDeadline(error, deadline) ? notTaken(deadline) : error;
      this.abandoned.add(settled);
      void settled.then(() => this.abandoned.delete(settled));
      throw error;
    }
  }

  /**
   * Waits (until the send's `deadline`) for the sends given up earlier that the client has not
   * settled; past that, nothing is sent and the messages are `unavailable` (no attempt spent).
   */
  private async afterAbandoned(signals: readonly AbortSignal[], deadline: Deadline): Promise<void> {
    if (this.abandoned.size === 0) return;
    try {
      await raceAbort(Promise.all(this.abandoned), signals, 'an earlier send', deadline);
    } catch (error) {
      throw unavailableError(
        `not sent: the Kafka client may still deliver an earlier send of these keys (${describeError(error)})`,
      );
    }
  }

  /**
   * Reports in-flight sends `unavailable` at once (closedOutcome: the relay spends no attempt on
   * what close() kept from the cluster), fails a connect in flight (the client's retries
   * of it end too) and waits for it to settle, lets the client finish the sends (at most
   * `confirmTimeoutMs`, so no retry reconnects a disconnected producer), then disconnects and
   * waits out the client's retry of a send still pending (no retry runs after close()).
   * All of it within `closeTimeoutMs`: past it the producer's sockets are destroyed (review 100:
   * a cluster gone silent held the disconnect for the send in flight, up to requestTimeoutMs).
   * Each publish in flight has answered (and told the observer) before it resolves. Safe to call
   * twice.
   */
  async close(): Promise<void> {
    this.closing ??= (async () => {
      // A publish from now on is answered `unavailable` and reports nothing (observePublish).
      this.calls.close();
      // Both reasons are marked unavailable (markUnavailable): every wait they end (a send, a
      // topic check, the producer's connect or replacement) is classified `unavailable`, as a
      // closed publisher is a cluster the relay cannot reach; the relay's own signal stays
      // `retryable` (its answer discarded: publishBatch stopped waiting at that abort).
      this.inFlight.abort(unavailableError('Kafka publisher is closed'));
      this.stopping.abort(markUnavailable(closedError('Kafka publisher')));
      const ms = this.options.closeTimeoutMs;
      await boundedClose(
        'Kafka publisher close',
        ms,
        (pastBound) => this.closeClients(pastBound),
        async () => {
          this.logger.warn(
            { closeTimeoutMs: ms },
            `Kafka publisher did not finish closing within ${ms} ms (closeTimeoutMs): its connections are destroyed`,
          );
          await this.producer.destroy().catch(() => undefined);
        },
      );
    })();
    await this.closing;
  }

  /** Lets a connect and the sends in flight settle, then disconnects the admin and the producer. */
  private async closeClients(pastBound: AbortSignal): Promise<void> {
    const connecting = this.connecting;
    if (connecting) await connecting.catch(() => undefined);
    await settleWithin([...this.unsettled], this.options.confirmTimeoutMs);
    await this.topics.close();
    await this.producer.disconnect().catch((error: unknown) => {
      // Past the bound the producer was destroyed and close() resolved: no line then.
      if (pastBound.aborted) return;
      this.logger.warn({ err: describeError(error) }, 'Kafka producer disconnect failed');
    });
    // A send the client still retries ends at its next retry, refused (the producer no longer
    // connects): its timer, at most clientRetryCeilingMs away, is waited out, within the bound.
    await Promise.allSettled([...this.unsettled]);
    // Each publish in flight, answered by the aborts of close(), has told the observer before
    // close() resolves (review 145); within closeTimeoutMs as the rest.
    await this.calls.settled(this.options.closeTimeoutMs);
  }
}

/**
 * The deadline passed before the producer took the send (a topic check the cluster did not
 * answer, an earlier send, a new producer's connect): nothing of the messages was tried, so no
 * attempt is spent.
 */
function notTaken(deadline: Deadline): Error {
  return unavailableError(
    `not sent: the Kafka producer did not take the send within ${deadlineText(deadline)}`,
  );
}

const INVALID_RECORD: ReadonlySet<string> = new Set(['INVALID_RECORD']);

/**
 * Why the broker refused `record` sent alone: the client's description, and for a record without
 * a key refused INVALID_RECORD, the cause that is (kafkajs's answer to produce carries no broker
 * text): a compacted topic takes no record without a key (review 140).
 */
function refusalReason(record: OutboundRecord, error: unknown, failure: ErrorClassification): string {
  if (record.key !== null || !hasKafkaType(error, INVALID_RECORD)) return failure.message;
  return `${failure.message} (a compacted topic (cleanup.policy=compact) refuses a record without a key: the event has no orderingKey)`;
}

/** Resolves once every promise settled or `ms` passed, whichever comes first. */
async function settleWithin(promises: readonly Promise<unknown>[], ms: number): Promise<void> {
  if (promises.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([Promise.allSettled(promises), deadline]);
  clearTimeout(timer);
}

/** When the producer took a send (SequencedProducer's `handed`), if it did. */
interface SendTiming {
  handedAt?: number;
}

/** The share of confirmTimeoutMs a send must have had, unanswered, to be charged (unanswered). */
const CHARGEABLE_SHARE = 0.75;

/**
 * Whether the send had most of `deadline` from when the producer took it: a record given only
 * the end of a publish's shared deadline and unanswered was not shown too slow to send.
 */
function hadMost(deadline: Deadline, timing: SendTiming): boolean {
  return timing.handedAt !== undefined && deadline.at - timing.handedAt >= deadline.ms * CHARGEABLE_SHARE;
}
