import {
  FERRY_HEADERS,
  abortableDelay,
  backoffDelay,
  safeEmit,
  type InboxAcceptor,
  type InboxAcceptResult,
} from '@ferry/core';
import type { Batch, Consumer, EachBatchPayload, KafkaMessage, Producer } from 'kafkajs';
import { REJECT_REASONS, closedError, describeError, transportError, type RejectReason } from './errors';
import {
  resolveConsumerOptions,
  type ConsumerOptions,
  type KafkaConsumerEvent,
  type ResolvedConsumerOptions,
} from './options';
import { decodeRecord } from './wire';

export interface KafkaInboxConsumer {
  /** Resolves once this member joined its group and received an assignment (possibly empty). */
  ready(): Promise<void>;
  /** Stops fetching, leaves the group and disconnects; uncommitted work is re-read by the next owner. Safe twice. */
  close(): Promise<void>;
}

interface DeadLetter {
  readonly message: KafkaMessage;
  readonly reason: RejectReason;
  readonly detail: string;
}

type ChunkOutcome = { readonly done: true } | { readonly done: false; readonly error: unknown };

/**
 * Consumes `topics` as group `groupId` and offers every record to the inbox.
 *
 * Commit rule: records are handled per partition in offset order, in chunks of `maxAcceptBatch`
 * with one `acceptMany` each; a chunk's offsets are committed only after the whole chunk is
 * accepted (or dead-lettered), so a committed offset always has every earlier offset of its
 * partition accepted. A failed chunk is never committed: the partition is paused, the consumer
 * seeks back to the chunk's first offset and resumes after a backoff, as often as it takes.
 */
export async function attachKafkaConsumer(
  inbox: InboxAcceptor,
  options: ConsumerOptions,
): Promise<KafkaInboxConsumer> {
  const consumer = new InboxConsumer(inbox, resolveConsumerOptions(options));
  await consumer.start();
  return consumer;
}

class InboxConsumer implements KafkaInboxConsumer {
  private readonly producer: Producer;
  private consumer: Consumer | null = null;
  private readonly stopping = new AbortController();
  private closing: Promise<void> | null = null;
  private joined!: () => void;
  private readonly joinedOnce = new Promise<void>((resolve) => (this.joined = resolve));
  private readonly failures = new Map<string, number>();
  private readonly resumeTimers = new Set<NodeJS.Timeout>();
  private restarts = 0;

  constructor(
    private readonly inbox: InboxAcceptor,
    private readonly options: ResolvedConsumerOptions,
  ) {
    this.producer = options.connection.kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      retry: { retries: options.deadLetterRetries },
    });
  }

  async start(): Promise<void> {
    try {
      await this.producer.connect();
      await this.startSession();
    } catch (error) {
      await this.close();
      throw transportError('starting the Kafka inbox consumer failed', error);
    }
  }

  ready(): Promise<void> {
    return this.joinedOnce;
  }

  private emit(event: KafkaConsumerEvent): void {
    safeEmit(this.options.onEvent, event, this.options.connection.logger);
  }

  /** One kafkajs consumer from connect to crash; a crash kafkajs does not restart starts a new session. */
  private async startSession(): Promise<void> {
    const { options } = this;
    const consumer = options.connection.kafka.consumer({
      groupId: options.groupId,
      sessionTimeout: options.sessionTimeoutMs,
      heartbeatInterval: options.heartbeatIntervalMs,
      rebalanceTimeout: options.rebalanceTimeoutMs,
      maxWaitTimeInMs: options.maxWaitTimeMs,
      allowAutoTopicCreation: false,
      retry: { restartOnFailure: async () => !this.stopping.signal.aborted },
    });
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      this.restarts = 0;
      this.joined();
      this.emit({ kind: 'joined', assignment: event.payload.memberAssignment });
    });
    consumer.on(consumer.events.CRASH, (event) => {
      this.emit({
        kind: 'crashed',
        error: describeError(event.payload.error),
        restart: event.payload.restart,
      });
      if (!event.payload.restart) void this.restartSession(consumer);
    });
    await consumer.connect();
    await consumer.subscribe({ topics: [...options.topics], fromBeginning: options.fromBeginning });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: options.partitionsConsumedConcurrently,
      eachBatch: (payload) => this.handleBatch(consumer, payload),
    });
  }

  private async restartSession(crashed: Consumer): Promise<void> {
    await crashed.disconnect().catch(() => undefined);
    if (this.consumer !== crashed) return;
    while (!this.stopping.signal.aborted) {
      this.restarts += 1;
      try {
        await abortableDelay(
          backoffDelay(this.restarts, this.options.restartBackoff, this.options.random),
          this.stopping.signal,
        );
        await this.startSession();
        if (this.stopping.signal.aborted) await this.consumer?.disconnect().catch(() => undefined);
        return;
      } catch (error) {
        if (this.stopping.signal.aborted) return;
        this.options.connection.logger.warn(
          { err: describeError(error) },
          'Kafka consumer restart failed; retrying',
        );
        await this.consumer?.disconnect().catch(() => undefined);
      }
    }
  }

  private async handleBatch(consumer: Consumer, payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, heartbeat, isRunning, isStale, commitOffsetsIfNecessary } = payload;
    const { topic, partition } = batch;
    const partitionKey = `${topic}:${partition}`;
    for (let start = 0; start < batch.messages.length; start += this.options.maxAcceptBatch) {
      if (!isRunning() || isStale()) return;
      const chunk = batch.messages.slice(start, start + this.options.maxAcceptBatch);
      const first = chunk[0]!;
      const last = chunk[chunk.length - 1]!;
      const outcome = await this.handleChunk(topic, partition, chunk);
      if (!outcome.done) {
        this.retryLater(consumer, topic, partition, first.offset, outcome.error);
        return;
      }
      // A revoked or stopping partition's work is not committed here: its next owner re-reads
      // from the last commit and the inbox absorbs the overlap as duplicates.
      if (!isRunning() || isStale()) return;
      resolveOffset(last.offset);
      const offset = commitPosition(batch, last);
      await commitOffsetsIfNecessary({ topics: [{ topic, partitions: [{ partition, offset }] }] });
      this.failures.delete(partitionKey);
      this.emit({ kind: 'committed', topic, partition, offset, records: chunk.length });
      await heartbeat();
    }
  }

  private async handleChunk(
    topic: string,
    partition: number,
    chunk: readonly KafkaMessage[],
  ): Promise<ChunkOutcome> {
    const deadLetters: DeadLetter[] = [];
    const inputs = [];
    const inputMessages: KafkaMessage[] = [];
    for (const message of chunk) {
      const decoded = decodeRecord(topic, partition, message, {
        consumer: this.options.consumer,
        maxPayloadBytes: this.inbox.maxPayloadBytes,
        identity: this.options.identity,
      });
      if (decoded.ok) {
        inputs.push(decoded.input);
        inputMessages.push(message);
      } else {
        deadLetters.push({ message, reason: decoded.reason, detail: decoded.detail });
      }
    }
    let results: readonly InboxAcceptResult[] = [];
    if (inputs.length > 0) {
      try {
        results = await this.inbox.acceptMany(inputs);
      } catch (error) {
        return { done: false, error };
      }
      if (results.length !== inputs.length) {
        return {
          done: false,
          error: new Error(`acceptMany returned ${results.length} results for ${inputs.length} inputs`),
        };
      }
    }
    results.forEach((result, index) => {
      const message = inputMessages[index]!;
      if (result.kind === 'invalid') {
        deadLetters.push({
          message,
          reason: REJECT_REASONS.inboxInvalid,
          detail: `${result.code}: ${result.reason}`,
        });
      } else if (result.kind === 'conflict') {
        deadLetters.push({ message, reason: REJECT_REASONS.fingerprintConflict, detail: result.reason });
      }
    });
    this.emit({
      kind: 'accepted',
      topic,
      partition,
      accepted: results.filter((result) => result.kind === 'accepted').length,
      duplicates: results.filter((result) => result.kind === 'duplicate').length,
      deadLettered: deadLetters.length,
    });
    if (deadLetters.length === 0) return { done: true };
    try {
      await this.sendDeadLetters(topic, partition, deadLetters);
      return { done: true };
    } catch (error) {
      return { done: false, error: transportError('producing to the dead-letter topic failed', error) };
    }
  }

  private async sendDeadLetters(
    topic: string,
    partition: number,
    deadLetters: readonly DeadLetter[],
  ): Promise<void> {
    const deadLetterTopic = this.options.deadLetterTopic(topic);
    await this.producer.send({
      topic: deadLetterTopic,
      acks: -1,
      messages: deadLetters.map(({ message, reason, detail }) => ({
        key: message.key ?? null,
        value: message.value ?? null,
        headers: {
          ...message.headers,
          [FERRY_HEADERS.rejectReason]: reason,
          'x-ferry-reject-detail': detail.slice(0, 1_000),
          'x-ferry-source-topic': topic,
          'x-ferry-source-partition': String(partition),
          'x-ferry-source-offset': message.offset,
        },
      })),
    });
    for (const letter of deadLetters) {
      this.emit({
        kind: 'dead_lettered',
        topic,
        partition,
        offset: letter.message.offset,
        reason: letter.reason,
        deadLetterTopic,
      });
    }
  }

  /** Pause the partition, seek back to the first unaccepted offset, resume after a backoff. */
  private retryLater(
    consumer: Consumer,
    topic: string,
    partition: number,
    offset: string,
    error: unknown,
  ): void {
    const partitionKey = `${topic}:${partition}`;
    const attempt = (this.failures.get(partitionKey) ?? 0) + 1;
    this.failures.set(partitionKey, attempt);
    const delayMs = backoffDelay(attempt, this.options.retryBackoff, this.options.random);
    this.options.connection.logger.warn(
      { topic, partition, offset, attempt, delayMs, err: describeError(error) },
      'inbox acceptance failed; partition paused, will seek back and retry',
    );
    this.emit({
      kind: 'acceptance_failed',
      topic,
      partition,
      offset,
      attempt,
      delayMs,
      error: describeError(error),
    });
    consumer.pause([{ topic, partitions: [partition] }]);
    consumer.seek({ topic, partition, offset });
    const timer = setTimeout(() => {
      this.resumeTimers.delete(timer);
      if (!this.stopping.signal.aborted) consumer.resume([{ topic, partitions: [partition] }]);
    }, delayMs);
    this.resumeTimers.add(timer);
  }

  async close(): Promise<void> {
    this.closing ??= (async () => {
      this.stopping.abort(closedError('Kafka inbox consumer'));
      for (const timer of this.resumeTimers) clearTimeout(timer);
      this.resumeTimers.clear();
      await this.consumer?.disconnect().catch((error: unknown) => {
        this.options.connection.logger.warn(
          { err: describeError(error) },
          'Kafka consumer disconnect failed',
        );
      });
      await this.producer.disconnect().catch(() => undefined);
    })();
    await this.closing;
  }
}

/** Offset to commit after `last`: past any trailing control records when `last` ends the batch. */
function commitPosition(batch: Batch, last: KafkaMessage): string {
  const isBatchEnd = batch.messages[batch.messages.length - 1] === last;
  const position = isBatchEnd ? batch.lastOffset() : last.offset;
  return (BigInt(position) + 1n).toString();
}
