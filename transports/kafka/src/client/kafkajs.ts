import {
  Kafka,
  logLevel,
  type Consumer,
  type ConsumerRunConfig,
  type KafkaConfig,
  type LogEntry,
  type logCreator,
} from 'kafkajs';
import type { Logger } from '@ferry/core';
import { kafkajsLogMethod } from '../logLevels';
import { registerKafkajsCodecs } from './kafkajsCodecs';
import { installKafkajsHeaderGrouping } from './kafkajsHeaderGrouping';
import { KafkajsGate, longPollWithin } from './kafkajsGate';
import { dropLossyHeaderNames } from './kafkajsHeaderNames';
import { KafkajsProducer } from './kafkajsProducer';
import { SequencedSends } from './sequencedSends';
import { SeedRotation } from './seedRotation';
import { destroyedOnAbort } from './closedOnAbort';
import { waitForLeaders } from './leaders';
import type { KafkaLogLevel, ResolvedConnectionOptions } from '../connectionOptions';
import { CLEANUP_POLICY, TOPIC_RESOURCE } from './topicConfigs';
import type {
  ConsumedRecord,
  DriverAdmin,
  DriverConsumer,
  DriverConsumerOptions,
  DriverProducer,
  SequencedProducer,
  DriverProducerOptions,
  KafkaClientDriver,
  SessionHandlers,
} from './types';

const KAFKAJS_LEVELS: Record<KafkaLogLevel, logLevel> = {
  nothing: logLevel.NOTHING,
  error: logLevel.ERROR,
  warn: logLevel.WARN,
  info: logLevel.INFO,
  debug: logLevel.DEBUG,
};

/**
 * kafkajs's wait before it restarts a crashed consumer (its default, set explicitly so that
 * ferry can report it): a crash whose error carries its own `retryTime` waits that instead.
 */
const KAFKAJS_RESTART_MS = 300;

/** kafkajs log lines go to ferry's logger instead of the console, recoverable ones lowered (logLevels.ts). */
function ferryLogCreator(logger: Logger): logCreator {
  return () => (entry: LogEntry) => {
    const { message, ...fields } = entry.log;
    logger[kafkajsLogMethod(entry)]({ ...fields, namespace: entry.namespace }, message);
  };
}

/** The kafkajs client behind ferry's client interface (the default). */
export class KafkajsDriver implements KafkaClientDriver {
  readonly name = 'kafkajs';
  readonly kafka: Kafka;
  private readonly config: KafkaConfig;
  private readonly seeds: SeedRotation;

  constructor(options: ResolvedConnectionOptions) {
    registerKafkajsCodecs();
    installKafkajsHeaderGrouping();
    this.seeds = new SeedRotation(options.brokers);
    this.config = {
      ...(options.kafkaConfig as Partial<KafkaConfig>),
      brokers: [...options.brokers],
      clientId: options.clientId,
      connectionTimeout: options.connectionTimeoutMs,
      requestTimeout: options.requestTimeoutMs,
      logLevel: KAFKAJS_LEVELS[options.kafkaLogLevel],
      logCreator: ferryLogCreator(options.logger),
    };
    this.kafka = new Kafka(this.config);
  }

  /** A kafkajs client of its own for one producer or consumer, reaching the brokers through a gate. */
  private gated(
    signal: AbortSignal,
    retryCeilingMs = Infinity,
    closing: 'refuses' | 'connects' = 'connects',
  ): { kafka: Kafka; gate: KafkajsGate } {
    const gate = new KafkajsGate(this.seeds, signal, this.config.socketFactory, closing, retryCeilingMs);
    return { kafka: new Kafka(gate.config(this.config)), gate };
  }

  producer(options: DriverProducerOptions): SequencedProducer {
    return new SequencedSends(() => this.clientProducer(options), options.replaced);
  }

  clientProducer(options: DriverProducerOptions): DriverProducer {
    // A closing publisher's producer connects nowhere: kafkajs's retries of a send end (KafkajsGate).
    const { kafka, gate } = this.gated(
      options.signal,
      options.retryCeilingMs,
      options.whileClosing ?? 'refuses',
    );
    return new KafkajsProducer(kafka, gate, options);
  }

  consumer(options: DriverConsumerOptions): DriverConsumer {
    const { kafka, gate } = this.gated(options.signal, options.retryCeilingMs);
    return new KafkajsConsumer(kafka, gate, options);
  }

  /**
   * An admin client of its own, closed entirely by its disconnect() (nothing of it runs once it
   * resolves). Without `signal` (the topology helpers) its connect is kafkajs's, retries
   * included; with one (the publisher's topic check, the consumer's start check) it goes through
   * the gate like a producer's, and the signal's abort destroys it (its sockets, with an error:
   * kafkajs fails a connection's requests in flight on 'error', and its disconnect waits for them).
   */
  async admin(signal?: AbortSignal, retryCeilingMs = Infinity): Promise<DriverAdmin> {
    const { kafka, gate } = this.gated(signal ?? new AbortController().signal, retryCeilingMs);
    const admin = kafka.admin();
    try {
      await (signal ? gate.connecting(() => admin.connect()) : admin.connect());
    } catch (error) {
      await gate.disconnect(admin).catch(() => undefined);
      throw error;
    }
    const destroy = () => gate.release(new Error('the admin client is closing'));
    const unwatch = destroyedOnAbort(signal, destroy);
    return {
      listTopics: () => admin.listTopics(),
      cleanupPolicies: async (topics) => {
        const { resources } = await admin.describeConfigs({
          includeSynonyms: false,
          resources: topics.map((name) => ({ type: TOPIC_RESOURCE, name, configNames: [CLEANUP_POLICY] })),
        });
        const policies = new Map<string, string>();
        for (const resource of resources) {
          const entry = resource.configEntries.find((config) => config.configName === CLEANUP_POLICY);
          if (entry !== undefined) policies.set(resource.resourceName, entry.configValue);
        }
        return policies;
      },
      createTopics: async (topics) => {
        await admin.createTopics({
          topics: topics.map((topic) => ({ ...topic, configEntries: [...topic.configEntries] })),
          waitForLeaders: false,
        });
        const names = topics.map((topic) => topic.topic);
        await waitForLeaders(async () => {
          const metadata = await admin.fetchTopicMetadata({ topics: names });
          return (
            metadata.topics.length === names.length &&
            metadata.topics.every(
              ({ partitions }) => partitions.length > 0 && partitions.every(({ leader }) => leader >= 0),
            )
          );
        });
      },
      deleteTopics: (topics) => admin.deleteTopics({ topics: [...topics] }),
      deleteGroups: async (groupIds) => {
        await admin.deleteGroups([...groupIds]);
      },
      disconnect: () => {
        unwatch();
        return gate.disconnect(admin);
      },
      destroy,
    };
  }
}

/** The owner's answer to a crash: a restart only for `true`, none when it throws. */
function wantsRestart(options: DriverConsumerOptions, error: unknown): boolean {
  try {
    return options.restartOnFailure(error) === true;
  } catch {
    return false;
  }
}

class KafkajsConsumer implements DriverConsumer {
  private readonly consumer: Consumer;
  /**
   * The client's start in flight or done (connect, subscribe, join; a restart's too): kafkajs's
   * stop() returns at once while its runner is not running yet, and the start went on after a
   * disconnect (review 126: a close() from inside `connected` saw kafkajs fetch after it).
   */
  private starting: Promise<void> = Promise.resolve();
  /** What restartOnFailure answered for the crash being reported (kafkajs is told never to restart). */
  private restartWanted = false;
  private restartTimer: NodeJS.Timeout | null = null;
  private disconnecting = false;

  constructor(
    kafka: Kafka,
    private readonly gate: KafkajsGate,
    private readonly options: DriverConsumerOptions,
  ) {
    this.consumer = kafka.consumer({
      groupId: options.groupId,
      sessionTimeout: options.sessionTimeoutMs,
      heartbeatInterval: options.heartbeatIntervalMs,
      rebalanceTimeout: options.rebalanceTimeoutMs,
      maxWaitTimeInMs: longPollWithin(options.maxWaitTimeMs, options.retryCeilingMs),
      // Its fetches compare the topics' partitions with the assignment's once the metadata is
      // this old, and rejoin on a new one (kafkajs's default, 5 minutes, left it unread so long).
      metadataMaxAge: options.metadataMaxAgeMs,
      allowAutoTopicCreation: false,
      retry: gate.retry({
        initialRetryTime: KAFKAJS_RESTART_MS,
        // Asked only for a crash kafkajs would restart from. Its own restart (a start on a timer)
        // is one disconnect() could not wait for: this class restarts it instead (restart()).
        // Never rejects: kafkajs restarts the client itself on a rejection (review 129). An answer
        // that throws, or is no `true`, is no restart: the owner starts a new session.
        restartOnFailure: async (error) => {
          this.restartWanted = !this.disconnecting && wantsRestart(options, error);
          return false;
        },
      }),
    });
  }

  async run(handlers: SessionHandlers): Promise<void> {
    const { consumer } = this;
    consumer.on(consumer.events.GROUP_JOIN, (event) => handlers.onJoin(event.payload.memberAssignment));
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      // A crash of the destroyed client (its batch ended by the destroy, throwIfDestroyed) is no
      // loss of the session to report: its owner's close() reports it closed.
      if (this.gate.destroyed) return;
      // A disconnect() since the answer wins (review 129): no restart, nor a timer left for it.
      const restart = this.restartWanted && !this.disconnecting;
      this.restartWanted = false;
      const retryTime = (payload.error as { retryTime?: unknown }).retryTime;
      const restartInMs = typeof retryTime === 'number' && retryTime > 0 ? retryTime : KAFKAJS_RESTART_MS;
      if (restart) this.restartTimer = setTimeout(() => this.restart(handlers), restartInMs);
      handlers.onCrash(payload.error, restart ? restartInMs : null);
    });
    this.starting = this.gate.connecting(() => this.connectAndRun(handlers));
    await this.starting;
  }

  /**
   * kafkajs's restart after a crash (its run() again, as its own restart timer does), waited for
   * by disconnect(). A start as the first one: through the gate, so close() fails its connect at
   * once (review 129: kafkajs's own connect retries held close() to its deadline), and a connect
   * that fails ends the session (the next one waits ferry's reconnect backoff).
   */
  private restart(handlers: SessionHandlers): void {
    this.restartTimer = null;
    if (this.disconnecting) return;
    this.starting = this.gate
      .connecting(() => this.connectAndRun(handlers))
      .catch((error: unknown) => {
        if (!this.disconnecting) handlers.onCrash(error, null);
      });
  }

  private async connectAndRun(handlers: SessionHandlers): Promise<void> {
    const { consumer, options } = this;
    await consumer.connect();
    await consumer.subscribe({ topics: [...options.topics], fromBeginning: options.fromBeginning });
    await consumer.run(this.runConfig(handlers));
  }

  private runConfig(handlers: SessionHandlers): ConsumerRunConfig {
    const { options } = this;
    return {
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: options.partitionsConsumedConcurrently,
      eachBatch: async ({
        batch,
        resolveOffset,
        heartbeat,
        isRunning,
        isStale,
        commitOffsetsIfNecessary,
      }) => {
        const { topic, partition } = batch;
        dropLossyHeaderNames(batch.messages);
        try {
          await handlers.eachBatch({
            topic,
            partition,
            records: batch.messages,
            isRunning,
            isStale,
            heartbeat,
            highWatermark: () => batch.highWatermark,
            commitThrough: async (last: ConsumedRecord) => {
              resolveOffset(last.offset);
              const isBatchEnd = batch.messages[batch.messages.length - 1] === last;
              const position = isBatchEnd ? batch.lastOffset() : last.offset;
              const offset = (BigInt(position) + 1n).toString();
              await commitOffsetsIfNecessary({ topics: [{ topic, partitions: [{ partition, offset }] }] });
              return offset;
            },
          });
        } finally {
          // Past the owner's close() bound (the client destroyed), the batch ends as a failure
          // kafkajs does not retry. Returned, kafkajs heartbeats on the destroyed client, fails
          // retriably, and its fetch loop waits once more to retry: a wait set off only after the
          // destroy (a dead-letter send held the batch until then), which fired after close()
          // resolved (review 150). A retriable failure of the batch would be retried likewise.
          this.gate.throwIfDestroyed();
        }
      },
    };
  }

  pause(topic: string, partition: number): void {
    this.consumer.pause([{ topic, partitions: [partition] }]);
  }

  resume(topic: string, partition: number): void {
    this.consumer.resume([{ topic, partitions: [partition] }]);
  }

  seek(topic: string, partition: number, offset: string): void {
    this.consumer.seek({ topic, partition, offset });
  }

  /** kafkajs hands over no fetch without records, nor its high watermark. */
  highWatermark(): string | null {
    return null;
  }

  /**
   * Waits for the start in flight (failed at once by the signal during its connect; a join that
   * answered finishes), then stops and disconnects the client: nothing of it runs afterwards.
   */
  async disconnect(): Promise<void> {
    this.stopRestarts();
    await this.starting.catch(() => undefined);
    await this.gate.disconnect(this.consumer);
  }

  /**
   * With an error: kafkajs fails a connection's requests and ends its request-timeout interval on
   * a socket's 'error', not on its 'close' (without, the interval of each connection fired on
   * after close() resolved).
   */
  destroy(): Promise<void> {
    this.stopRestarts();
    return this.gate.release(new Error('the consumer is closing'));
  }

  private stopRestarts(): void {
    this.disconnecting = true;
    if (this.restartTimer !== null) clearTimeout(this.restartTimer);
    this.restartTimer = null;
  }
}
