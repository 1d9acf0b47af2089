/**
 * The small internal client interface ferry's Kafka transport runs on. Two implementations:
 * kafkajs (`./kafkajs`) and @platformatic/kafka 1.x (`./platformatic`). Everything above this
 * interface (publisher, consumer, dead letters, topology) is the same for both.
 */

/** Which Kafka client library a connection uses. */
export type KafkaClientName = 'kafkajs' | 'platformatic';

/** Headers to produce: a value per name, or several for a name given more than once. */
export type RecordHeaders = { [name: string]: Buffer | string | (Buffer | string)[] | undefined };

/**
 * Headers as consumed: a name another producer gave more than once holds every value in order,
 * and a value may be null (Kafka allows it; the Java client's `headers.add(name, null)`).
 */
export type ConsumedHeaders = {
  [name: string]: Buffer | string | null | (Buffer | string | null)[] | undefined;
};

/** A consumed record, as both clients hand it over (kafkajs's KafkaMessage has this shape). */
export interface ConsumedRecord {
  readonly offset: string;
  readonly key?: Buffer | null;
  readonly value: Buffer | null;
  readonly headers?: ConsumedHeaders;
  readonly timestamp: string;
}

/** A record to produce. */
export interface ProducedRecord {
  readonly key: Buffer | string | null;
  readonly value: Buffer | string | null;
  readonly headers: RecordHeaders;
}

export interface TopicRecords {
  readonly topic: string;
  readonly records: readonly ProducedRecord[];
}

export interface DriverProducerOptions {
  /** Client retries per send before the send fails. */
  readonly retries: number;
  /** Aborted when the owner closes: a connect in flight fails at once, nothing reconnects. */
  readonly signal: AbortSignal;
  /**
   * The longest the client may wait between its own retries (clientRetryCeilingMs of the owner's
   * closeTimeoutMs): a retry timer the client cannot cancel is waited out by the owner's close().
   * None: the client's own timings.
   */
  readonly retryCeilingMs?: number;
  /**
   * Once `signal` aborted, on kafkajs (KafkajsGate): `refuses` (the default, a publisher's) opens
   * no connection at all, so the client's retries of a send end; `connects` goes on connecting
   * outside a connect in flight until the producer is disconnected: a consumer's dead-letter
   * producer, whose owner's close() lets the chunk in flight finish, its dead letters included.
   */
  readonly whileClosing?: 'refuses' | 'connects';
  /** Told when a new client producer takes over after a failed send (SequencedSends). */
  readonly replaced?: (cause: unknown) => void;
}

/** A send waiting its turn to be handed to the client (SequencedSends: one send at a time). */
export interface SendTurn {
  /**
   * Aborted when the caller gave the send up (reported it not sent): a send still waiting then
   * fails without reaching the client; one the client has already goes on (it may be written).
   */
  readonly givenUp: AbortSignal;
  /** Called as the send is handed to the client: from then on it may be written. */
  readonly handed: () => void;
}

/** An idempotent producer: every send waits for all in-sync replicas (acks -1). */
export interface DriverProducer {
  /**
   * One try to connect, without the client's own connect retries where the client allows it
   * (the caller's backoff retries). Rejects at once when the signal aborts; once it settled,
   * nothing of the try is left running.
   */
  connect(): Promise<void>;
  /** Sends the batches; `turn`: what the caller tells and learns of a send waiting its turn. */
  send(batches: readonly TopicRecords[], turn?: SendTurn): Promise<void>;
  disconnect(): Promise<void>;
  /**
   * Ends the client at once, whatever its disconnect() still waits for (a send a silent cluster
   * never answers): its sockets are destroyed, which fails its requests in flight, and no new
   * one opens. For a close that reached its bound (closeTimeoutMs), or a replaced producer whose
   * disconnect did not end in time.
   */
  destroy(): Promise<void>;
  /** Called when the producer lost its connection (in-flight sends count as not sent). */
  onDisconnect(listener: () => void): void;
}

/** DriverProducer over a succession of client producers, a new one after each failed send (SequencedSends). */
export interface SequencedProducer extends DriverProducer {
  /**
   * The replacement in progress of a producer whose send failed: settles once the new one is
   * connected (or failed to connect, which the next send then retries); null when none is. A
   * caller waits for it (KafkaPublisher: at most confirmTimeoutMs) before a send's deadline
   * starts, so the replacement, ferry's own cost of a failed send, is not charged to the send.
   */
  ready(): Promise<void> | null;
}

/** One fetched run of records of one partition, in offset order. */
export interface ConsumedBatch {
  readonly topic: string;
  readonly partition: number;
  readonly records: readonly ConsumedRecord[];
  /** False once the session is stopping. */
  isRunning(): boolean;
  /** True once the partition was sought or this member's generation changed. */
  isStale(): boolean;
  heartbeat(): Promise<void>;
  /** The partition's high watermark (the offset after its newest record) as last fetched, if the client knows it. */
  highWatermark(): string | null;
  /**
   * Commits this partition through `last` (past trailing control records when `last` ends the
   * batch) for this member's generation; resolves with the committed offset (the next to read).
   */
  commitThrough(last: ConsumedRecord): Promise<string>;
}

export interface SessionHandlers {
  readonly eachBatch: (batch: ConsumedBatch) => Promise<void>;
  readonly onJoin: (assignment: Readonly<Record<string, number[]>>) => void;
  /**
   * The session failed. `restartInMs`: the client restarts itself after that many ms; null: it
   * stopped, and the caller starts a new session.
   */
  readonly onCrash: (error: unknown, restartInMs: number | null) => void;
}

export interface DriverConsumerOptions {
  readonly groupId: string;
  readonly topics: readonly string[];
  readonly fromBeginning: boolean;
  readonly sessionTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  readonly rebalanceTimeoutMs: number;
  readonly maxWaitTimeMs: number;
  /** How often the consumed topics' partitions are read again (a partition added is then assigned). */
  readonly metadataMaxAgeMs: number;
  readonly partitionsConsumedConcurrently: number;
  /** Asked before the client restarts itself after a failure. */
  readonly restartOnFailure: (error: unknown) => boolean;
  /** Aborted when the owner closes: a run() still connecting fails at once, nothing reconnects. */
  readonly signal: AbortSignal;
  /** As DriverProducerOptions.retryCeilingMs. */
  readonly retryCeilingMs?: number;
}

/** One consumer group member from connect to disconnect. */
export interface DriverConsumer {
  /**
   * Connects, subscribes and starts delivering batches; resolves once running. Like
   * DriverProducer.connect: one try, failed at once when the signal aborts.
   */
  run(handlers: SessionHandlers): Promise<void>;
  pause(topic: string, partition: number): void;
  resume(topic: string, partition: number): void;
  /** The next batch of the partition starts at `offset`. */
  seek(topic: string, partition: number, offset: string): void;
  /**
   * The partition's high watermark as the client's latest fetch of it answered, fetches that
   * returned no record included (a partition held behind an open transaction); null when the
   * client does not tell (kafkajs hands over only fetches with records).
   */
  highWatermark(topic: string, partition: number): string | null;
  /** Lets the batch in flight finish, leaves the group, closes the sockets. */
  disconnect(): Promise<void>;
  /**
   * Ends the client at once, whatever its disconnect() still waits for (a fetch or a LeaveGroup
   * a silent cluster never answers): its sockets are destroyed, which fails their requests in
   * flight, and no new one opens. For a close that reached its bound (closeTimeoutMs).
   */
  destroy(): Promise<void>;
}

export interface TopicCreation {
  readonly topic: string;
  readonly numPartitions: number;
  readonly replicationFactor: number;
  readonly configEntries: readonly { readonly name: string; readonly value: string }[];
}

export interface DriverAdmin {
  listTopics(): Promise<string[]>;
  /** Each topic's `cleanup.policy` as the broker reports it (`delete`, `compact`, `compact,delete`). */
  cleanupPolicies(topics: readonly string[]): Promise<ReadonlyMap<string, string>>;
  /** Creates the topics and waits until they have leaders. */
  createTopics(topics: readonly TopicCreation[]): Promise<void>;
  deleteTopics(topics: readonly string[]): Promise<void>;
  deleteGroups(groupIds: readonly string[]): Promise<void>;
  disconnect(): Promise<void>;
  /**
   * Ends the client at once, whatever its disconnect() still waits for (a listing a silent
   * cluster never answers): its sockets are destroyed, which fails its requests in flight, and no
   * new one opens. Called by the driver when the admin's signal aborts (KafkaClientDriver.admin).
   */
  destroy(): Promise<void>;
}

export interface KafkaClientDriver {
  readonly name: KafkaClientName;
  /** A producer that sends one request at a time, over a succession of client producers (SequencedSends). */
  producer(options: DriverProducerOptions): SequencedProducer;
  /**
   * One client producer, its sends not sequenced: what `producer()` hands each send to (and the
   * seam where tests watch or hold the sends that reach the client).
   */
  clientProducer(options: DriverProducerOptions): DriverProducer;
  consumer(options: DriverConsumerOptions): DriverConsumer;
  /**
   * A connected admin client. With `signal`, its connect is like DriverProducer.connect: one
   * try, failed at once when the signal aborts, nothing of it left running once it settled; and
   * once connected, the signal's abort destroys it (DriverAdmin.destroy) until it is
   * disconnected: its owner is closing, and a listing the cluster does not answer fails at once
   * instead of holding the owner's close() (review 102: an admin client only reads, it has
   * nothing to finish). Without, the client's own connect retries apply. `retryCeilingMs`: as
   * DriverProducerOptions.retryCeilingMs (the owner's; none without).
   */
  admin(signal?: AbortSignal, retryCeilingMs?: number): Promise<DriverAdmin>;
}
