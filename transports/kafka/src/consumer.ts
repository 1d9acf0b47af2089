import { type InboxAcceptor } from '@ferry/core';
import {
  AttachAttempts,
  abortableDelay,
  awaitReady,
  backoffDelay,
  checkAttachable,
  checkAttached,
  consumerEmitter,
  describeCause,
  isBatchWideFailure,
  outageReport,
  inRootContext,
  sizeMayCause,
  type ConsumerEmitter,
  type OutagePlace,
  type OutageReport,
  type ReadyOptions,
} from '@ferry/core/transport';
import type { ConsumedBatch, ConsumedRecord, DriverConsumer, DriverProducer } from './client/types';
import { handleChunk, type ChunkContext, type ChunkOutcome, type ChunkStage } from './chunk';
import {
  classifyKafkaError,
  closedError,
  describeCauses,
  describeError,
  transportError,
  undecodableBatch,
} from './errors';
import { checkTopicsExist, startRefusal } from './startChecks';
import { resolveConsumerOptions, type ConsumerOptions, type ResolvedConsumerOptions } from './options';
import { forgetUnassigned } from './assignedPartitions';
import { boundedClose, clientRetryCeilingMs } from './race';
import { ReceivedOffsets } from './receivedOffsets';
import { LagReport } from './lagReport';

export interface KafkaInboxConsumer {
  /**
   * The start-up gate: resolves once this member joined its group and received an assignment
   * (possibly empty), and stays resolved whatever becomes of the session; FERRY_TIMEOUT after
   * `timeoutMs` (default 60,000) while the brokers are unreachable (the consumer keeps trying),
   * FERRY_CLOSED once closed.
   */
  ready(options?: ReadyOptions): Promise<void>;
  /**
   * The readiness probe: resolves while the member's session runs (joined, fetching); rejects at
   * once with ConsumerDisconnectedError (FERRY_TRANSPORT_ERROR) naming the consumer, its group and
   * topics and the last failure while it does not (before the first join, and from a crashed
   * session until the next join), FERRY_CLOSED once closed.
   */
  check(): Promise<void>;
  /**
   * Stops fetching, lets the chunk in flight finish and commits it, leaves the group and
   * disconnects; work not yet accepted is re-read by the next owner. Safe twice; concurrent
   * calls share one promise.
   */
  close(): Promise<void>;
}

/**
 * Consumes `topics` as group `groupId` and offers every record to the inbox.
 *
 * Commit rule: records are handled per partition in offset order, in chunks of `maxBatchSize`
 * with one `acceptMany` each (bisected when one record fails it); a chunk's offsets are
 * committed only after every record of it is accepted, dead-lettered or skipped, so a committed
 * offset always has every earlier offset of its partition accepted. A chunk that fails
 * batch-wide is never committed: the partition is paused, the consumer seeks back to the chunk's
 * first offset and resumes after a backoff, as often as it takes (an outage: reported through
 * core's outageReport, as acceptHolding reports it for the other transports).
 */
export function attachKafkaConsumer(inbox: InboxAcceptor, options: ConsumerOptions): KafkaInboxConsumer {
  const resolved = checkAttachable(inbox, options, 'connection, topic, groupId and consumer', () =>
    resolveConsumerOptions(options),
  );
  const consumer = new InboxConsumer(inbox, resolved);
  consumer.start();
  return consumer;
}

class InboxConsumer implements KafkaInboxConsumer, ChunkContext {
  readonly producer: DriverProducer;
  readonly emit: ConsumerEmitter;
  /** Reports acceptance outages (database, admission limit) as every transport does. */
  private readonly outage: OutageReport;
  private consumer: DriverConsumer | null = null;
  private readonly stopping = new AbortController();
  /** Failed sessions since the last join, named by ready()'s timeout. */
  private readonly attempts = new AttachAttempts();
  private closing: Promise<void> | null = null;
  private joined!: () => void;
  private readonly joinedOnce = new Promise<void>((resolve) => (this.joined = resolve));
  private readonly failures = new Map<string, number>();
  /** Outage attempts of each partition (batch-wide failures, admission refusals) since acceptance last answered. */
  private readonly outages = new Map<string, number>();
  /** What was counted as received: a record read again after a seek back or a rejoin is not counted again. */
  private readonly received = new ReceivedOffsets();
  /** The `lag` of each partition: after its commits and periodically (a partition delivering nothing). */
  private readonly lag: LagReport;
  /** Partitions re-read in shorter chunks (shrink), by `topic:partition`: the chunk size and through which offset. */
  private readonly shrunk = new Map<string, { readonly limit: number; readonly through: bigint }>();
  private readonly resumeTimers = new Set<NodeJS.Timeout>();
  private restarts = 0;
  /**
   * Sessions ended by a record batch the client could not decompress. Not reset by a rejoin:
   * the batch is still there after it, so each new session waits longer (up to
   * `reconnectBackoff.maxMs`) instead of crashing on it again at the first backoff step.
   */
  private undecodableCrashes = 0;
  private producerConnected: Promise<void> | null = null;
  private sessions: Promise<void> = Promise.resolve();
  /** Who check() and its errors name. */
  private readonly what: string;
  /** The longest wait between the clients' own retries: close() waits the one pending out. */
  private readonly retryCeilingMs: number;

  constructor(
    readonly inbox: InboxAcceptor,
    readonly options: ResolvedConsumerOptions,
  ) {
    this.retryCeilingMs = clientRetryCeilingMs(options.closeTimeoutMs);
    this.producer = options.connection.driver.producer({
      retries: options.deadLetterSendRetries,
      signal: this.stopping.signal,
      retryCeilingMs: this.retryCeilingMs,
      // close() lets the chunk in flight finish, its dead letters too, also over a connection
      // opened then (the broker closed an idle one); the producer is disconnected after it,
      // within closeTimeoutMs, and refuses every connection from then on (review 147).
      whileClosing: 'connects',
      replaced: (cause) =>
        options.logger.info(
          { err: describeError(cause) },
          'Kafka dead-letter producer replaced after a failed send',
        ),
    });
    const source = options.topics.join(',');
    this.emit = consumerEmitter('kafka', source, options.observer, options.logger);
    this.outage = outageReport({
      transport: 'kafka',
      source,
      observer: options.observer,
      logger: options.logger,
      describe: describeCauses,
    });
    this.lag = new LagReport(options.groupId, this.emit);
    this.what = `Kafka inbox consumer ${options.consumer} of group ${options.groupId} (topics ${options.topics.join(', ')})`;
  }

  /**
   * Starts consuming in the background; ready() tells when the group was joined. In the root
   * context: the client's fetch loop, and every batch it hands over, runs outside any span of
   * the caller (review 71).
   */
  start(): void {
    this.sessions = inRootContext(() => this.keepSession(null));
    this.lag.start(() => {
      const { consumer } = this;
      return consumer && ((topic, partition) => consumer.highWatermark(topic, partition));
    });
  }

  ready(options?: ReadyOptions): Promise<void> {
    return awaitReady('Kafka inbox consumer', this.joinedOnce, this.stopping.signal, options, this.attempts);
  }

  check(): Promise<void> {
    return checkAttached(this.what, this.stopping.signal, this.attempts);
  }

  /** One client consumer from connect to crash; a crash the client does not restart starts a new session. */
  private async startSession(): Promise<void> {
    const { options } = this;
    const consumer = options.connection.driver.consumer({
      groupId: options.groupId,
      topics: options.topics,
      fromBeginning: options.fromBeginning,
      sessionTimeoutMs: options.sessionTimeoutMs,
      heartbeatIntervalMs: options.heartbeatIntervalMs,
      rebalanceTimeoutMs: options.rebalanceTimeoutMs,
      maxWaitTimeMs: options.maxWaitTimeMs,
      metadataMaxAgeMs: options.metadataMaxAgeMs,
      partitionsConsumedConcurrently: options.partitionsConsumedConcurrently,
      // A batch the client cannot decompress fails every fetch of it: the client's own quick
      // restarts would crash on it again, so ferry's session loop waits its growing backoff.
      restartOnFailure: (error) => !this.stopping.signal.aborted && undecodableBatch(error) === null,
      signal: this.stopping.signal,
      retryCeilingMs: this.retryCeilingMs,
    });
    this.consumer = consumer;
    await consumer.run({
      onJoin: (assignment) => {
        this.received.keepAssigned(assignment);
        this.lag.assigned(assignment);
        // Retry counts, outages and shrunk chunks of partitions moved to another member end here:
        // one that comes back later starts afresh (no recovery of an outage it no longer saw).
        forgetUnassigned(assignment, [this.failures, this.outages, this.shrunk]);
        this.restarts = 0;
        this.attempts.attached();
        this.joined();
        this.emit({ type: 'connected', assignment });
      },
      onCrash: (error, restartInMs) => {
        // Not attached from the crash on, also while a crashed session is disconnected. A crash
        // without a connection failure in it ended the session only (review 132: check() said
        // "lost its connection" of a batch the client could not decompress).
        this.attempts.lost(error, classifyKafkaError(error).unavailable ? 'connection' : 'session');
        if (restartInMs !== null) this.disconnected(error, restartInMs);
        else this.sessions = this.restartSession(consumer, error);
      },
      eachBatch: (batch) => this.handleBatch(consumer, batch),
    });
  }

  /** The session stopped (`retryInMs` null: for good, the consumer is closing). */
  private disconnected(error: unknown, retryInMs: number | null): void {
    const refusal = startRefusal(error, this.options.topics);
    if (refusal === null) this.attempts.failed(error);
    else this.attempts.refused(refusal);
    this.emit({ type: 'disconnected', error: describeCause(error), retryInMs });
  }

  /** A crash the client does not restart from: the crashed session ends and a new one starts. */
  private async restartSession(crashed: DriverConsumer, crash: unknown): Promise<void> {
    await crashed.disconnect().catch(() => undefined);
    if (this.consumer !== crashed) return;
    if (this.stopping.signal.aborted) this.disconnected(crash, null);
    else await this.keepSession(crash);
  }

  /**
   * The wait before the next session after `error` (`reconnectBackoff`, counted per kind of
   * failure); a batch the client cannot decompress is logged as such (error).
   */
  private restartDelay(error: unknown): number {
    const { options } = this;
    const undecodable = undecodableBatch(error);
    if (undecodable === null) {
      this.restarts += 1;
      return backoffDelay(this.restarts, options.reconnectBackoff, options.random);
    }
    this.undecodableCrashes += 1;
    const delay = backoffDelay(this.undecodableCrashes, options.reconnectBackoff, options.random);
    options.logger.error(
      {
        err: describeError(error),
        topics: options.topics,
        attempt: this.undecodableCrashes,
        retryInMs: delay,
      },
      `Kafka consumer of ${options.topics.join(',')} cannot read a fetched record batch (${describeError(undecodable)}); ` +
        `the partition holding it cannot advance past it (nothing is skipped): new session in ${delay} ms`,
    );
    return delay;
  }

  /**
   * Connects the dead-letter producer and starts a session, again after every failure with
   * `reconnectBackoff` between attempts (reported as `disconnected`), until one runs or the
   * consumer closes. `crash`: the failure that ended the last session (wait first), or null.
   * Settles only once nothing of a start is in flight, so close() can wait for it.
   */
  private async keepSession(crash: unknown): Promise<void> {
    let error = crash;
    for (let attempt = 0; !this.stopping.signal.aborted; attempt += 1) {
      if (attempt > 0 || crash !== null) await this.waitBeforeSession(error);
      try {
        // One try per start (the clients do not retry it themselves): this loop's backoff is the
        // retry. close() fails a start in flight at once and waits for it to settle.
        await this.startOnce();
        return;
      } catch (failure) {
        if (this.stopping.signal.aborted) return;
        error = failure;
        this.options.logger.warn({ err: describeError(failure) }, 'Kafka consumer start failed; retrying');
        await this.consumer?.disconnect().catch(() => undefined);
      }
    }
  }

  /**
   * The wait before the next session, reported as `disconnected`. Nothing skips it: a throw
   * while it is worked out would make the session loop retry at once, forever, without giving
   * the event loop a turn (the wait falls back to `reconnectBackoff.maxMs`).
   */
  private async waitBeforeSession(error: unknown): Promise<void> {
    let delay = this.options.reconnectBackoff.maxMs;
    try {
      delay = this.restartDelay(error);
      this.disconnected(undecodableBatch(error) ?? error, delay);
    } catch {
      // Reported or not, the wait below happens.
    }
    // Cut short by close(): the session loop sees the consumer stopping and ends.
    await abortableDelay(delay, this.stopping.signal).catch(() => undefined);
  }

  /** Connects the dead-letter producer and runs a session; what finishes after close() is undone. */
  private async startOnce(): Promise<void> {
    const undoIfClosed = (client: { disconnect(): Promise<void> } | null) =>
      this.stopping.signal.aborted ? client?.disconnect().catch(() => undefined) : undefined;
    await this.connectProducer();
    await undoIfClosed(this.producer);
    if (this.stopping.signal.aborted) return;
    const { connection, topics, deadLetterTopic } = this.options;
    const { missingDeadLetterTopics, compactedDeadLetterTopics } = await checkTopicsExist(
      connection,
      topics,
      deadLetterTopic,
      this.stopping.signal,
      this.retryCeilingMs,
    );
    if (this.stopping.signal.aborted) return;
    if (missingDeadLetterTopics.length > 0) {
      this.options.logger.warn(
        { missingTopics: missingDeadLetterTopics },
        `Kafka dead-letter topics missing: ${missingDeadLetterTopics.join(', ')}; a broker that does not ` +
          'create topics on first use holds the partition of the first rejected record until they exist (ensureTopics)',
      );
    }
    if (compactedDeadLetterTopics.length > 0) {
      this.options.logger.warn(
        { compactedTopics: compactedDeadLetterTopics },
        `Kafka dead-letter topics compacted (cleanup.policy compact): ${compactedDeadLetterTopics.join(', ')}; ` +
          'dead letters with the same key replace each other there, and a copy without its value is a ' +
          "tombstone that deletes the key's earlier ones: give dead-letter topics cleanup.policy=delete",
      );
    }
    await this.startSession();
    await undoIfClosed(this.consumer);
  }

  private connectProducer(): Promise<void> {
    this.producerConnected ??= this.producer.connect().catch((error: unknown) => {
      this.producerConnected = null;
      throw transportError('connecting the dead-letter producer failed', error);
    });
    return this.producerConnected;
  }

  private async handleBatch(consumer: DriverConsumer, batch: ConsumedBatch): Promise<void> {
    const { topic, partition, records, isRunning, isStale } = batch;
    const partitionKey = `${topic}:${partition}`;
    const received = this.received.count(partitionKey, records);
    if (received > 0) this.emit({ type: 'received', count: received }, topic);
    for (let start = 0; start < records.length;) {
      if (!isRunning() || isStale()) return;
      const chunk = records.slice(start, start + this.chunkSize(partitionKey));
      start += chunk.length;
      const first = chunk[0]!;
      const last = chunk[chunk.length - 1]!;
      const outcome = await handleChunk(this, topic, partition, chunk, batch.heartbeat);
      const outage = outcome.done === 'partly' || (outcome.done === false && isOutage(outcome));
      if (!outage)
        this.recovered(partitionKey, { topic, partition, offset: first.offset, count: chunk.length });
      if (outcome.done === 'partly') {
        await this.commitBeforeRefused(consumer, batch, chunk, outcome);
        return;
      }
      if (!outcome.done) {
        if (outcome.stage === 'inbox acceptance' && sizeMayCause(outcome.error))
          this.shrink(partitionKey, chunk);
        const position = { topic, partition, offset: first.offset, count: chunk.length };
        if (outage) this.holdBack(consumer, position, outcome.error);
        else this.retryLater(consumer, position, outcome);
        return;
      }
      // Finished work is committed while this member still owns the partition, also during
      // close(): stop() turns isRunning() false but waits for this batch before leaving the group.
      // A sought partition (isStale) is not committed; a stale generation's commit is refused.
      if (isStale()) return;
      const offset = await batch.commitThrough(last);
      this.failures.delete(partitionKey);
      this.regrow(partitionKey, last);
      if (outcome.accepted > 0) this.emit({ type: 'accepted', count: outcome.accepted }, topic);
      this.emit({ type: 'settled', count: chunk.length }, topic);
      this.lag.committedThrough(topic, partition, offset, batch.highWatermark());
      if (isRunning()) await batch.heartbeat();
    }
  }

  /** Records per chunk of the partition: maxBatchSize, or less while a shrunk range is re-read (shrink). */
  private chunkSize(partitionKey: string): number {
    return this.shrunk.get(partitionKey)?.limit ?? this.options.maxBatchSize;
  }

  /**
   * The chunk's acceptance failed in a way its size may cause (sizeMayCause: a timeout, a server
   * out of resources): its partition is re-read in chunks half as long, down to one record,
   * until every offset through the failed chunk's last is committed. Offered again whole, the
   * chunk could time out on every retry and stall its partition for good.
   */
  private shrink(partitionKey: string, chunk: readonly ConsumedRecord[]): void {
    const through = BigInt(chunk[chunk.length - 1]!.offset);
    const before = this.shrunk.get(partitionKey);
    this.shrunk.set(partitionKey, {
      limit: Math.max(1, Math.ceil(chunk.length / 2)),
      through: before && before.through > through ? before.through : through,
    });
  }

  /** Back to maxBatchSize once the range that failed is committed. */
  private regrow(partitionKey: string, committed: ConsumedRecord): void {
    const shrunk = this.shrunk.get(partitionKey);
    if (shrunk && BigInt(committed.offset) >= shrunk.through) this.shrunk.delete(partitionKey);
  }

  /**
   * The admission limit refused records of the chunk: the records before the first refused one
   * are committed (offsets are contiguous per partition) and the partition is sought back to
   * it, to be read again after the retry backoff. Back-pressure, not a failure: reported as
   * `acceptance-unavailable` (`count` the refused records); nothing is dead-lettered for it.
   * The answered records after the first refused one are read again and answered as duplicates.
   */
  private async commitBeforeRefused(
    consumer: DriverConsumer,
    batch: ConsumedBatch,
    chunk: readonly ConsumedRecord[],
    outcome: Extract<ChunkOutcome, { done: 'partly' }>,
  ): Promise<void> {
    const { topic, partition, isStale } = batch;
    if (isStale()) return;
    if (outcome.refusedAt > 0) {
      await batch.commitThrough(chunk[outcome.refusedAt - 1]!);
      if (outcome.accepted > 0) this.emit({ type: 'accepted', count: outcome.accepted }, topic);
      this.emit({ type: 'settled', count: outcome.refusedAt }, topic);
    }
    const offset = chunk[outcome.refusedAt]!.offset;
    this.holdBack(consumer, { topic, partition, offset, count: outcome.refused }, outcome.error);
  }

  /**
   * The inbox cannot accept (a batch-wide failure: the database is down, a timeout, the inbox
   * closed) or its admission limit refused `count` records from `offset` on: the partition is
   * sought back to `offset` and read again after the retry backoff, reported as an outage
   * (`acceptance-unavailable`; logged at warn when it begins, at debug for each further retry).
   */
  private holdBack(consumer: DriverConsumer, position: ChunkPosition, error: unknown): void {
    const { topic, partition, count } = position;
    const partitionKey = `${topic}:${partition}`;
    const attempt = (this.outages.get(partitionKey) ?? 0) + 1;
    this.outages.set(partitionKey, attempt);
    const { delayMs } = this.nextRetry(topic, partition);
    this.outage.unavailable(error, attempt, delayMs, count, outagePlace(position));
    this.seekBack(consumer, position, delayMs);
  }

  /**
   * Acceptance answered again for a chunk of a partition held by an outage: the outage is over
   * (`acceptance-recovered`, `count` the chunk's records), whatever then becomes of the chunk.
   */
  private recovered(partitionKey: string, position: ChunkPosition): void {
    const failures = this.outages.get(partitionKey);
    if (failures === undefined) return;
    this.outages.delete(partitionKey);
    this.outage.recovered(failures, position.count, outagePlace(position));
  }

  /**
   * A failure that is no outage (a dead-letter send, a retriable error the inbox threw for every
   * record alone): pause the partition, seek back to the first unaccepted offset, resume after a
   * backoff (`acceptance-failed`).
   */
  private retryLater(
    consumer: DriverConsumer,
    position: ChunkPosition,
    failure: { readonly stage: ChunkStage; readonly error: unknown },
  ): void {
    const { topic, partition, offset, count } = position;
    const { attempt, delayMs } = this.nextRetry(topic, partition);
    const cause = describeCauses(failure.error);
    this.options.logger.warn(
      { topic, partition, offset, attempt, delayMs, stage: failure.stage, err: cause },
      `Kafka ${topic}[${partition}] paused at offset ${offset}: ${failure.stage} failed (${cause}); ` +
        `seeking back, retry ${attempt} in ${delayMs} ms`,
    );
    this.emit({ type: 'acceptance-failed', count, error: `${failure.stage}: ${cause}`, delayMs }, topic);
    this.seekBack(consumer, position, delayMs);
  }

  /** Counts one more retry of the partition; its backoff grows until a chunk is committed whole. */
  private nextRetry(topic: string, partition: number): { attempt: number; delayMs: number } {
    const partitionKey = `${topic}:${partition}`;
    const attempt = (this.failures.get(partitionKey) ?? 0) + 1;
    this.failures.set(partitionKey, attempt);
    return { attempt, delayMs: backoffDelay(attempt, this.options.retryBackoff, this.options.random) };
  }

  /** Pauses the partition, seeks it back to `offset` and resumes it after `delayMs`. */
  private seekBack(
    consumer: DriverConsumer,
    position: { readonly topic: string; readonly partition: number; readonly offset: string },
    delayMs: number,
  ): void {
    const { topic, partition, offset } = position;
    // Closing: no retry here (a timer would outlive close()); the next owner re-reads the chunk.
    if (this.stopping.signal.aborted) return;
    consumer.pause(topic, partition);
    consumer.seek(topic, partition, offset);
    const timer = setTimeout(() => {
      this.resumeTimers.delete(timer);
      if (this.stopping.signal.aborted || this.consumer !== consumer) return;
      try {
        consumer.resume(topic, partition);
      } catch (error) {
        // The session ended meanwhile (kafkajs disconnects a crashed consumer before it restarts
        // and throws at resume until then): the restarted session reads the partition from its
        // committed offset, unpaused. A throw here would be uncaught and end the process.
        this.options.logger.debug(
          { topic, partition, err: describeError(error) },
          'Kafka partition not resumed: its session ended; the next session reads it from the committed offset',
        );
      }
    }, delayMs);
    this.resumeTimers.add(timer);
  }

  /** Past close()'s bound (`pastBound`) the client was destroyed and close() resolved: no line then. */
  private async disconnectConsumer(consumer: DriverConsumer | null, pastBound: AbortSignal): Promise<void> {
    await consumer?.disconnect().catch((error: unknown) => {
      if (pastBound.aborted) return;
      this.options.logger.warn({ err: describeError(error) }, 'Kafka consumer disconnect failed');
    });
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.stopping.abort(closedError('Kafka inbox consumer'));
      this.lag.stop();
      for (const timer of this.resumeTimers) clearTimeout(timer);
      this.resumeTimers.clear();
      const running = this.consumer;
      const ms = this.options.closeTimeoutMs;
      // Bounded (review 99): a cluster gone silent answers neither the fetch in flight nor the
      // LeaveGroup, each waited for up to requestTimeoutMs. Past the bound the clients' sockets
      // are destroyed: a chunk accepted and not committed then is read again by the next owner.
      await boundedClose(
        'Kafka consumer close',
        ms,
        (pastBound) => this.closeClients(running, pastBound),
        async () => {
          this.options.logger.warn(
            { topics: this.options.topics, groupId: this.options.groupId, closeTimeoutMs: ms },
            `Kafka consumer did not finish closing within ${ms} ms (closeTimeoutMs): its connections are ` +
              'destroyed; records not committed are read again by the next member of the group',
          );
          await Promise.all([
            ...[running, this.consumer].map((consumer) => consumer?.destroy().catch(() => undefined)),
            // A dead-letter send in flight holds its disconnect for the answer: ended now too.
            this.producer.destroy().catch(() => undefined),
          ]);
        },
      );
      this.emit.closed();
    })();
    return this.closing;
  }

  /** Lets the chunk in flight finish and commit, leaves the group, disconnects both clients. */
  private async closeClients(running: DriverConsumer | null, pastBound: AbortSignal): Promise<void> {
    await this.disconnectConsumer(running, pastBound);
    // A start in flight fails at once (the clients watch the stopping signal); once it
    // settled, the session it created, if any, is disconnected too. Past the bound both
    // clients were destroyed instead.
    await this.sessions;
    if (pastBound.aborted) return;
    if (this.consumer !== running) await this.disconnectConsumer(this.consumer, pastBound);
    if (pastBound.aborted) return;
    await this.producer.disconnect().catch(() => undefined);
  }
}

/** Where a chunk begins in its partition, and its records. */
interface ChunkPosition {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly count: number;
}

/** A batch-wide acceptance failure: the database cannot accept (not the records' fault). */
function isOutage(outcome: Extract<ChunkOutcome, { done: false }>): boolean {
  return outcome.stage === 'inbox acceptance' && isBatchWideFailure(outcome.error);
}

/** The held records' partition and first offset, as outageReport names them. */
function outagePlace(position: ChunkPosition): OutagePlace {
  const { topic, partition, offset } = position;
  return {
    source: topic,
    where: `${topic}[${partition}] from offset ${offset}`,
    fields: { topic, partition, offset },
  };
}
