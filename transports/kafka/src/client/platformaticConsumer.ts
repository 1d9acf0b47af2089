import type { Message } from '@platformatic/kafka';
import { setOwnProperty, storableHeaderText } from '@ferry/core/transport';
import { hasKafkaType } from '../errors';
import { closedOnAbort } from './closedOnAbort';
import { PartitionGate } from './partitionGate';
import type { PlatformaticBase, PlatformaticKafka } from './platformaticTypes';
import type {
  ConsumedBatch,
  ConsumedHeaders,
  ConsumedRecord,
  DriverConsumer,
  DriverConsumerOptions,
  SessionHandlers,
} from './types';

type Consumer = InstanceType<PlatformaticKafka['Consumer']>;
type MessagesStream = Awaited<ReturnType<Consumer['consume']>>;
type FetchChannel = PlatformaticKafka['consumerFetchesChannel']['asyncStart'];

/** The part of a fetch response the high watermarks come from. */
interface FetchResult {
  readonly responses?: readonly {
    readonly topicId: string;
    readonly partitions: readonly {
      readonly partitionIndex: number;
      readonly errorCode: number;
      readonly highWatermark: bigint;
    }[];
  }[];
}

const partitionKey = (topic: string, partition: number): string => `${topic}:${partition}`;

/**
 * Join failures while the group coordinator is not ready yet (a fresh cluster creates
 * __consumer_offsets on first use and loads it; a coordinator moves after a broker restart).
 */
export const COORDINATOR_NOT_READY: ReadonlySet<string> = new Set([
  'COORDINATOR_LOAD_IN_PROGRESS',
  'COORDINATOR_NOT_AVAILABLE',
  'NOT_COORDINATOR',
]);

/**
 * A @platformatic/kafka consumer behind ferry's client interface. The client delivers one
 * stream of records for every assigned partition and has no per-partition pause or seek, so
 * this class builds them: records are read from the stream as they are buffered and handed over
 * per partition in offset order, one partition at a time, through a PartitionGate that moves the
 * stream's fetch position for a seek. Heartbeats run in the client's background, so
 * `heartbeat()` has nothing to do.
 */
export class PlatformaticConsumer implements DriverConsumer {
  private readonly consumer: Consumer;
  private stream: MessagesStream | null = null;
  private readonly stopping = new AbortController();
  private readonly gate = new PartitionGate((key, offset) => this.stream?.offsetsToFetch.set(key, offset));
  private pumping: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  /** The newest high watermark fetched per partition (`topic:partition`). */
  private readonly highWatermarks = new Map<string, bigint>();
  private readonly fetches: FetchChannel;

  constructor(
    kafka: PlatformaticKafka,
    base: PlatformaticBase,
    private readonly options: DriverConsumerOptions,
  ) {
    this.fetches = kafka.consumerFetchesChannel.asyncStart;
    this.consumer = new kafka.Consumer({
      ...base,
      groupId: options.groupId,
      sessionTimeout: options.sessionTimeoutMs,
      heartbeatInterval: options.heartbeatIntervalMs,
      rebalanceTimeout: options.rebalanceTimeoutMs,
      maxWaitTime: options.maxWaitTimeMs,
      autocommit: false,
      autocreateTopics: false,
    });
  }

  /**
   * The client keeps each fetch response's high watermarks to itself; its diagnostics channel
   * of fetches shows the response (before the records reach the stream), so they are read there.
   */
  private readonly onFetch = (message: unknown): void => {
    const { client, result } = message as { client?: unknown; result?: FetchResult };
    if (client !== this.consumer || !result) return;
    const topicsById = new Map<string, string>();
    for (const [name, topic] of this.consumer.currentMetadata?.topics ?? []) topicsById.set(topic.id, name);
    for (const { topicId, partitions } of result.responses ?? []) {
      const topic = topicsById.get(topicId);
      if (topic === undefined) continue;
      for (const { partitionIndex, errorCode, highWatermark } of partitions) {
        if (errorCode === 0) this.highWatermarks.set(partitionKey(topic, partitionIndex), highWatermark);
      }
    }
  };

  async run(handlers: SessionHandlers): Promise<void> {
    this.fetches.subscribe(this.onFetch);
    this.consumer.on('consumer:group:join', (payload) => {
      const assignment: Record<string, number[]> = {};
      for (const { topic, partitions } of payload.assignments ?? []) assignment[topic] = [...partitions];
      handlers.onJoin(assignment);
    });
    let stream: MessagesStream;
    try {
      stream = await closedOnAbort(
        this.options.signal,
        () => this.consumer.close(),
        () => this.joinAndConsume(),
      );
    } catch (error) {
      if (!hasKafkaType(error, COORDINATOR_NOT_READY)) throw error;
      // kafkajs joins in the background of run() and a failed join crashes into a restart; the
      // same here once the client's own retries gave up on a coordinator that is not ready.
      this.crash(handlers, error);
      return;
    }
    this.stream = stream;
    const wakeUp = () => this.wake?.();
    stream.on('readable', wakeUp);
    stream.on('close', wakeUp);
    stream.on('error', (error: Error) => this.crash(handlers, error));
    this.pumping = this.pump(stream, handlers).catch((error: unknown) => this.crash(handlers, error));
  }

  private joinAndConsume(): Promise<MessagesStream> {
    const { options } = this;
    return this.consumer.consume({
      topics: [...options.topics],
      mode: 'committed',
      fallbackMode: options.fromBeginning ? 'earliest' : 'latest',
      autocommit: false,
      maxWaitTime: options.maxWaitTimeMs,
      sessionTimeout: options.sessionTimeoutMs,
      heartbeatInterval: options.heartbeatIntervalMs,
      rebalanceTimeout: options.rebalanceTimeoutMs,
    });
  }

  private crash(handlers: SessionHandlers, error: unknown): void {
    if (this.stopping.signal.aborted) return;
    this.stopping.abort(error);
    this.wake?.();
    handlers.onCrash(error, null);
  }

  /** Reads what the stream buffered, hands it over per partition, then waits for more. */
  private async pump(stream: MessagesStream, handlers: SessionHandlers): Promise<void> {
    while (!this.stopping.signal.aborted) {
      const messages: Message[] = [];
      for (let message = stream.read() as Message | null; message !== null; message = stream.read()) {
        messages.push(message);
      }
      if (messages.length === 0) {
        if (stream.destroyed || stream.readableEnded) throw new Error('the consumer stream ended');
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = null;
        continue;
      }
      for (const [key, group] of groupByPartition(messages)) {
        if (this.stopping.signal.aborted) return;
        const deliverable = group.filter((message) => this.gate.admit(key, message.offset));
        if (deliverable.length > 0) await handlers.eachBatch(this.batch(deliverable));
      }
    }
  }

  private batch(messages: readonly Message[]): ConsumedBatch {
    const { topic, partition } = messages[0]!;
    const key = partitionKey(topic, partition);
    const generation = this.consumer.generationId;
    const records = messages.map(toRecord);
    return {
      topic,
      partition,
      records,
      isRunning: () => !this.stopping.signal.aborted,
      isStale: () =>
        this.gate.seeking(key) ||
        this.consumer.generationId !== generation ||
        !this.assigned(topic, partition),
      heartbeat: async () => undefined,
      highWatermark: () => this.highWatermarks.get(key)?.toString() ?? null,
      commitThrough: async (last: ConsumedRecord) => {
        const offset = BigInt(last.offset) + 1n;
        await this.consumer.commit({ offsets: [{ topic, partition, offset, leaderEpoch: -1 }] });
        return offset.toString();
      },
    };
  }

  private assigned(topic: string, partition: number): boolean {
    const assignment = this.consumer.assignments?.find((entry) => entry.topic === topic);
    return assignment?.partitions.includes(partition) ?? false;
  }

  pause(topic: string, partition: number): void {
    this.gate.pause(partitionKey(topic, partition));
  }

  resume(topic: string, partition: number): void {
    this.gate.resume(partitionKey(topic, partition));
  }

  seek(topic: string, partition: number, offset: string): void {
    this.gate.seek(partitionKey(topic, partition), BigInt(offset));
  }

  /** Lets the batch in flight finish (and commit), then closes the stream and leaves the group. */
  async disconnect(): Promise<void> {
    if (!this.stopping.signal.aborted) this.stopping.abort(new Error('consumer disconnecting'));
    this.fetches.unsubscribe(this.onFetch);
    this.wake?.();
    await this.pumping?.catch(() => undefined);
    await this.stream?.close().catch(() => undefined);
    await this.consumer.close();
  }
}

function groupByPartition(messages: readonly Message[]): Map<string, Message[]> {
  const groups = new Map<string, Message[]>();
  for (const message of messages) {
    const key = partitionKey(message.topic, message.partition);
    const group = groups.get(key);
    if (group) group.push(message);
    else groups.set(key, [message]);
  }
  return groups;
}

function toRecord(message: Message): ConsumedRecord {
  const headers: ConsumedHeaders = {};
  for (const [name, value] of message.headers ?? new Map<Buffer, Buffer>()) {
    // A name that is not valid UTF-8 is left out here, where its bytes still are (see decodeHeaders).
    const text = storableHeaderText(name);
    if (text === undefined) continue;
    // A name given more than once keeps every value, in order, as kafkajs hands them over. Own
    // properties only (setOwnProperty): `headers['constructor']` would read Object.
    const before = Object.hasOwn(headers, text) ? headers[text] : undefined;
    const grouped =
      before === undefined
        ? (value ?? null)
        : [...(Array.isArray(before) ? before : [before]), value ?? null];
    setOwnProperty(headers, text, grouped);
  }
  return {
    offset: message.offset.toString(),
    key: message.key ?? null,
    value: message.value ?? null,
    headers,
    timestamp: message.timestamp.toString(),
  };
}
