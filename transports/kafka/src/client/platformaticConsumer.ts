import type { Message } from '@platformatic/kafka';
import { storableHeaderText } from '@ferry/core/transport';
import { ClientSockets } from './clientSockets';
import { groupHeaders } from '../recordHeaders';
import { hasKafkaType } from '../errors';
import { deadlineIn, raceAbort } from '../race';
import { closedOnAbort } from './closedOnAbort';
import { PartitionGate } from './partitionGate';
import { PartitionWatch, type PartitionCounts } from './partitionWatch';
import type { PlatformaticBase, PlatformaticKafka } from './platformaticTypes';
import type {
  ConsumedBatch,
  ConsumedRecord,
  DriverConsumer,
  DriverConsumerOptions,
  SessionHandlers,
} from './types';

type Consumer = InstanceType<PlatformaticKafka['Consumer']>;
type MessagesStream = Awaited<ReturnType<Consumer['consume']>>;
type FetchChannel = PlatformaticKafka['consumerFetchesChannel']['asyncStart'];

/** The part of a fetch request the fetch offsets come from. */
interface FetchRequest {
  readonly topics?: readonly {
    readonly topicId: string;
    readonly partitions: readonly { readonly partition: number; readonly fetchOffset: bigint }[];
  }[];
}

/** The part of a fetch response the high watermarks and the first records come from. */
interface FetchResult {
  readonly responses?: readonly {
    readonly topicId: string;
    readonly partitions: readonly {
      readonly partitionIndex: number;
      readonly errorCode: number;
      readonly highWatermark: bigint;
      readonly records?: readonly FetchedBatch[] | null;
      readonly abortedTransactions?:
        readonly { readonly producerId: bigint; readonly firstOffset: bigint }[] | null;
    }[];
  }[];
}

interface FetchedBatch {
  readonly firstOffset: bigint;
  readonly lastOffsetDelta: number;
  readonly attributes: number;
  readonly producerId: bigint;
  readonly records: readonly { readonly offsetDelta: number; readonly key?: Buffer | null }[];
}

/** Record batch attribute bits: a transactional batch, a control batch (a transaction marker). */
const TRANSACTIONAL_BATCH = 1 << 4;
const CONTROL_BATCH = 1 << 5;

/** Offsets `[from, to]` of one batch of an aborted transaction. */
type OffsetRange = readonly [bigint, bigint];

/**
 * The batches of aborted transactions in one answer, as a read_committed consumer skips them: a
 * transactional batch of a producer from the first offset the answer lists for one of its aborted
 * transactions up to that producer's next ABORT marker. The client does this itself but keeps one
 * aborted transaction per producer, so of two aborted back to back in one answer the first one's
 * records were delivered as committed (review 42).
 */
function abortedBatches(
  batches: readonly FetchedBatch[],
  aborted: readonly { readonly producerId: bigint; readonly firstOffset: bigint }[],
): OffsetRange[] {
  if (aborted.length === 0) return [];
  const pending = [...aborted].sort((a, b) =>
    a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0,
  );
  const open = new Set<bigint>();
  const ranges: OffsetRange[] = [];
  let next = 0;
  for (const batch of batches) {
    while (next < pending.length && pending[next]!.firstOffset <= batch.firstOffset)
      open.add(pending[next++]!.producerId);
    if ((batch.attributes & CONTROL_BATCH) !== 0) {
      // A control record's key: version (int16), then type (int16): 0 ABORT, 1 COMMIT.
      const key = batch.records[0]?.key;
      if (key && key.length >= 4 && key.readInt16BE(2) === 0) open.delete(batch.producerId);
      continue;
    }
    if ((batch.attributes & TRANSACTIONAL_BATCH) !== 0 && open.has(batch.producerId))
      ranges.push([batch.firstOffset, batch.firstOffset + BigInt(batch.lastOffsetDelta)]);
  }
  return ranges;
}

const within = (offset: bigint, ranges: readonly OffsetRange[]): boolean =>
  ranges.some(([from, to]) => offset >= from && offset <= to);

/**
 * What an answer holds of a partition: its first record at or after `from` (when `seeking`) and
 * its last record, control batches and `aborted` ones skipped, and where the next fetch starts
 * (past the last batch, a marker too). Reads from the end for the last record: an answer of many
 * records costs one or two, not one per record.
 */
function fetchedRange(
  batches: readonly FetchedBatch[],
  from: bigint,
  aborted: readonly OffsetRange[],
  seeking: boolean,
): { first: bigint | undefined; last: bigint | undefined; next: bigint | undefined } {
  const offsets = function* (batch: FetchedBatch, backwards: boolean): Generator<bigint> {
    if ((batch.attributes & CONTROL_BATCH) !== 0) return;
    const { records } = batch;
    for (let i = 0; i < records.length; i += 1) {
      const offset = batch.firstOffset + BigInt(records[backwards ? records.length - 1 - i : i]!.offsetDelta);
      if (!within(offset, aborted)) yield offset;
    }
  };
  let first: bigint | undefined;
  if (seeking) {
    search: for (const batch of batches) {
      for (const offset of offsets(batch, false)) {
        if (offset >= from) {
          first = offset;
          break search;
        }
      }
    }
  }
  let last: bigint | undefined;
  for (let i = batches.length - 1; i >= 0 && last === undefined; i -= 1) {
    for (const offset of offsets(batches[i]!, true)) {
      last = offset;
      break;
    }
  }
  const end = batches[batches.length - 1];
  return {
    first,
    last,
    next: end === undefined ? undefined : end.firstOffset + BigInt(end.lastOffsetDelta) + 1n,
  };
}

const partitionKey = (topic: string, partition: number): string => `${topic}:${partition}`;

/** A fetch from an offset no longer in the partition's log (resetOutOfRange). */
const OUT_OF_RANGE: ReadonlySet<string> = new Set(['OFFSET_OUT_OF_RANGE']);
/** ListOffsets timestamps: the log's start, and its end. */
const EARLIEST = -2n;
const LATEST = -1n;

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
  /** The offset reset after an OFFSET_OUT_OF_RANGE fetch (resetOutOfRange); the session ends after it. */
  private resetting: Promise<unknown> | null = null;
  private wake: (() => void) | null = null;
  /** Per partition, the batches of aborted transactions fetched and not yet passed (abortedBatches). */
  private readonly aborted = new Map<string, OffsetRange[]>();
  /**
   * Per partition, the last record fetched so far and where the next fetch starts: past trailing
   * transaction markers, which a commit after the last record leaves behind (commitThrough).
   */
  private readonly fetchedEnds = new Map<string, { lastRecord: bigint | undefined; next: bigint }>();
  /** The newest high watermark fetched per partition (`topic:partition`). */
  private readonly highWatermarks = new Map<string, bigint>();
  private readonly fetches: FetchChannel;
  /** The client's open broker sockets (destroy()). */
  private readonly sockets: ClientSockets;
  /** Rejoins the group, as its leader, once a consumed topic has more partitions (review 106). */
  private watch: PartitionWatch | null = null;
  /**
   * run()'s join and consume in flight, or done: disconnect() waits for it, or the stream the
   * client creates after the join would run after the disconnect (review 126).
   */
  private starting: Promise<void> = Promise.resolve();
  private disconnecting: Promise<void> | null = null;

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
    // Every connection of the client, its stream's fetch connections too (their pool reports to
    // the consumer), for destroy(); one opened after it (a retry of its LeaveGroup) ends at once.
    this.sockets = new ClientSockets(this.consumer, true);
  }

  /**
   * The client keeps each fetch response's high watermarks to itself; its diagnostics channel
   * of fetches shows the response (before the records reach the stream), so they are read there.
   */
  private readonly onFetch = (message: unknown): void => {
    const { client, result, options } = message as {
      client?: unknown;
      result?: FetchResult;
      options?: FetchRequest;
    };
    if (client !== this.consumer || !result) return;
    const topicsById = new Map<string, string>();
    for (const [name, topic] of this.consumer.currentMetadata?.topics ?? []) topicsById.set(topic.id, name);
    const requested = new Map<string, bigint>();
    for (const { topicId, partitions } of options?.topics ?? []) {
      for (const { partition, fetchOffset } of partitions)
        requested.set(`${topicId}:${partition}`, fetchOffset);
    }
    for (const { topicId, partitions } of result.responses ?? []) {
      const topic = topicsById.get(topicId);
      if (topic === undefined) continue;
      for (const { partitionIndex, errorCode, highWatermark, records, abortedTransactions } of partitions) {
        if (errorCode !== 0) continue;
        const key = partitionKey(topic, partitionIndex);
        this.highWatermarks.set(key, highWatermark);
        const from = requested.get(`${topicId}:${partitionIndex}`);
        if (from === undefined) continue;
        const aborted = abortedBatches(records ?? [], abortedTransactions ?? []);
        if (aborted.length > 0) this.aborted.set(key, [...(this.aborted.get(key) ?? []), ...aborted]);
        const seeking = this.gate.seeking(key);
        const { first, last, next } = fetchedRange(records ?? [], from, aborted, seeking);
        if (next !== undefined) {
          const before = this.fetchedEnds.get(key);
          this.fetchedEnds.set(key, { lastRecord: last ?? before?.lastRecord, next });
        }
        // Where a seek waits: the first record of an answer to a fetch from the sought offset.
        if (seeking) this.gate.fetched(key, from, first, next);
      }
    }
  };

  run(handlers: SessionHandlers): Promise<void> {
    this.starting = this.start(handlers);
    return this.starting;
  }

  private async start(handlers: SessionHandlers): Promise<void> {
    this.fetches.subscribe(this.onFetch);
    const watch = new PartitionWatch(
      this.options.metadataMaxAgeMs,
      () => this.partitionCounts(),
      () => this.rejoin(handlers),
    );
    this.watch = watch;
    let joined = false;
    this.consumer.on('consumer:group:join', (payload) => {
      joined = true;
      const assignment: Record<string, number[]> = {};
      for (const { topic, partitions } of payload.assignments ?? []) assignment[topic] = [...partitions];
      // The leader assigned from the client's metadata, which it had just read.
      watch.joined(payload.isLeader === true, countsOf(this.consumer.currentMetadata?.topics));
      handlers.onJoin(assignment);
    });
    let stream: MessagesStream;
    try {
      // Closed on abort while it connects and joins. Once joined, the client goes on to create
      // its stream at once: closed under it, the stream failed unhandled ("Client is closed").
      // It is let finish, and disconnect(), which waits for it, closes it.
      stream = await closedOnAbort(
        this.options.signal,
        () => (joined ? Promise.resolve() : this.consumer.close()),
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
    stream.on('error', (error: Error) => {
      if (this.resetting !== null || !hasKafkaType(error, OUT_OF_RANGE)) return this.crash(handlers, error);
      // The next session would fetch from the same committed offsets and fail the same way, for
      // ever (review 42): those outside their partition's log are moved first, then it restarts
      // (the pump, which sees the stream end meanwhile, waits for that).
      const resetting = this.resetOutOfRange().then(
        () => error,
        (resetError: unknown) => resetError,
      );
      this.resetting = resetting;
      void resetting.then((cause) => this.crash(handlers, cause, resetting));
    });
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

  /** The consumed topics' partition counts, read afresh. */
  private async partitionCounts(): Promise<PartitionCounts> {
    const metadata = await this.consumer.metadata({ topics: [...this.options.topics], forceUpdate: true });
    return countsOf(metadata.topics);
  }

  /** A rejoin as the leader makes the group rebalance; one that fails ends the session. */
  private rejoin(handlers: SessionHandlers): void {
    if (this.stopping.signal.aborted) return;
    const { options } = this;
    this.consumer
      .joinGroup({
        sessionTimeout: options.sessionTimeoutMs,
        heartbeatInterval: options.heartbeatIntervalMs,
        rebalanceTimeout: options.rebalanceTimeoutMs,
      })
      .catch((error: unknown) => this.crash(handlers, error));
  }

  /**
   * Commits, for each assigned partition whose committed offset is no longer in its log (below
   * its start after retention or deleted records, or past its end), the log's start when
   * `fromBeginning`, else its end: where kafkajs resets such a partition (`fromBeginning`). The
   * client fails the whole fetch on OFFSET_OUT_OF_RANGE, the stream with it, and every later
   * session from the same offsets. Bounded by the session timeout.
   */
  private async resetOutOfRange(): Promise<void> {
    const assignments = (this.consumer.assignments ?? []).map(({ topic, partitions }) => ({
      topic,
      partitions: [...partitions],
    }));
    if (assignments.length === 0) return;
    const topics = assignments.map((entry) => entry.topic);
    const partitions = Object.fromEntries(assignments.map((entry) => [entry.topic, entry.partitions]));
    const reading = Promise.all([
      this.consumer.listOffsets({ topics, partitions, timestamp: EARLIEST }),
      this.consumer.listOffsets({ topics, partitions, timestamp: LATEST }),
      this.consumer.listCommittedOffsets({ topics: assignments }),
    ]);
    const deadline = deadlineIn(this.options.sessionTimeoutMs);
    await raceAbort(reading, [this.options.signal], 'offset reset', deadline);
    const [starts, ends, committed] = await reading;
    const offsets: { topic: string; partition: number; offset: bigint; leaderEpoch: number }[] = [];
    for (const { topic, partitions: numbers } of assignments) {
      for (const partition of numbers) {
        const start = starts.get(topic)?.[partition];
        const end = ends.get(topic)?.[partition];
        const at = committed.get(topic)?.[partition];
        if (start === undefined || end === undefined || at === undefined || at < 0n) continue;
        if (at >= start && at <= end) continue;
        offsets.push({ topic, partition, offset: this.options.fromBeginning ? start : end, leaderEpoch: -1 });
      }
    }
    if (offsets.length > 0)
      await raceAbort(this.consumer.commit({ offsets }), [this.options.signal], 'offset reset', deadline);
  }

  private crash(handlers: SessionHandlers, error: unknown, reset: Promise<unknown> | null = null): void {
    if (this.stopping.signal.aborted || this.resetting !== reset) return;
    this.stopping.abort(error);
    this.watch?.stop();
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
        const deliverable = group.filter(
          (message) => this.gate.admit(key, message.offset) && !this.abortedRecord(key, message.offset),
        );
        if (deliverable.length > 0) await handlers.eachBatch(this.batch(deliverable));
      }
    }
  }

  /** Whether the record at `offset` is of an aborted transaction; ranges behind it are forgotten. */
  private abortedRecord(key: string, offset: bigint): boolean {
    const ranges = this.aborted.get(key);
    if (ranges === undefined) return false;
    const ahead = ranges.filter(([, to]) => to >= offset);
    if (ahead.length === 0) this.aborted.delete(key);
    else if (ahead.length < ranges.length) this.aborted.set(key, ahead);
    return within(offset, ahead);
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
      highWatermark: () => this.highWatermark(topic, partition),
      commitThrough: async (last: ConsumedRecord) => {
        // Past trailing control records (transaction markers) when `last` is the last record
        // fetched: committed after the record alone, the group stayed a marker behind the end
        // for ever, its lag at 1 (review 42), where kafkajs commits past them.
        const end = this.fetchedEnds.get(key);
        const after = BigInt(last.offset) + 1n;
        const offset =
          end !== undefined && end.lastRecord === BigInt(last.offset) && end.next > after ? end.next : after;
        await this.consumer.commit({ offsets: [{ topic, partition, offset, leaderEpoch: -1 }] });
        return offset.toString();
      },
    };
  }

  private assigned(topic: string, partition: number): boolean {
    const assignment = this.consumer.assignments?.find((entry) => entry.topic === topic);
    return assignment?.partitions.includes(partition) ?? false;
  }

  highWatermark(topic: string, partition: number): string | null {
    return this.highWatermarks.get(partitionKey(topic, partition))?.toString() ?? null;
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

  /**
   * Lets the start and the batch in flight finish (and commit), then closes the stream and leaves
   * the group. Concurrent calls share one: a second stream close() resolves at once, the stream
   * still open, and the client then refused to leave the group while it consumed.
   */
  disconnect(): Promise<void> {
    this.disconnecting ??= this.stop();
    return this.disconnecting;
  }

  private async stop(): Promise<void> {
    if (!this.stopping.signal.aborted) this.stopping.abort(new Error('consumer disconnecting'));
    this.watch?.stop();
    this.fetches.unsubscribe(this.onFetch);
    this.wake?.();
    await this.starting.catch(() => undefined);
    await this.pumping?.catch(() => undefined);
    await this.stream?.close().catch(() => undefined);
    try {
      await this.consumer.close();
    } catch (error) {
      // Its LeaveGroup failed (a request timed out on a silent cluster): the client reopens
      // itself then, its connections kept and its group requests still going, a socket to the
      // silent broker held after ferry's close() (review 132). Ended as a destroy() ends it.
      await this.sockets.destroy();
      throw error;
    }
  }

  async destroy(): Promise<void> {
    if (!this.stopping.signal.aborted) this.stopping.abort(new Error('consumer destroyed'));
    this.watch?.stop();
    this.fetches.unsubscribe(this.onFetch);
    this.wake?.();
    await this.sockets.destroy();
  }
}

function countsOf(
  topics: ReadonlyMap<string, { readonly partitionsCount: number }> | undefined,
): PartitionCounts {
  const counts = new Map<string, number>();
  for (const [topic, { partitionsCount }] of topics ?? []) counts.set(topic, partitionsCount);
  return counts;
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
  return {
    offset: message.offset.toString(),
    key: message.key ?? null,
    value: message.value ?? null,
    headers: groupHeaders(headerEntries(message.headers ?? new Map<Buffer, Buffer>())),
    timestamp: message.timestamp.toString(),
  };
}

/**
 * A record's headers as text names and values, in order: a name that is not valid UTF-8 is left
 * out here, where its bytes still are (see decodeHeaders).
 */
function* headerEntries(headers: Iterable<[Buffer, Buffer | undefined]>): Generator<[string, Buffer | null]> {
  for (const [name, value] of headers) {
    const text = storableHeaderText(name);
    if (text !== undefined) yield [text, value ?? null];
  }
}
