import type { Producer } from 'kafkajs';
import {
  attachKafkaConsumer,
  deleteGroups,
  deleteTopics,
  ensureTopics,
  type ConsumerOptions,
  type KafkaConnection,
  type KafkaInboxConsumer,
} from '../src';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import {
  PgTestAcceptor,
  fastGroup,
  fullyCommitted,
  testConnection,
  uniqueName,
  waitFullyCommitted,
} from './support';

export interface StartedConsumer {
  readonly handle: KafkaInboxConsumer;
  readonly groupId: string;
  readonly events: TransportConsumerEvent[];
}

/**
 * Real Kafka + a PgTestAcceptor for consumer tests: creates topics (each with its `.dlq`) and
 * groups with unique names, and removes all of them in `close()`.
 */
export class ConsumerHarness {
  readonly connection: KafkaConnection = testConnection();
  private readonly topics: string[] = [];
  private readonly groups: string[] = [];
  private readonly running: KafkaInboxConsumer[] = [];

  private constructor(
    readonly acceptor: PgTestAcceptor,
    /** A plain kafkajs producer, for records ferry's publisher would never write. */
    readonly raw: Producer,
  ) {}

  static async create(): Promise<ConsumerHarness> {
    const acceptor = await PgTestAcceptor.create();
    const raw = testConnection().kafka.producer({ allowAutoTopicCreation: false });
    await raw.connect();
    return new ConsumerHarness(acceptor, raw);
  }

  /** A source topic with `partitions` partitions and its dead-letter topic `<name>.dlq`. */
  async topicPair(prefix: string, partitions = 1): Promise<string> {
    const name = uniqueName(prefix);
    this.topics.push(name, `${name}.dlq`);
    await ensureTopics(this.connection, [{ topic: name, partitions }, { topic: `${name}.dlq` }]);
    return name;
  }

  /** Attaches a consumer in a new group (or `extra.groupId`) and waits until it joined. */
  async start(
    topic: string,
    consumer: string,
    extra: Partial<ConsumerOptions> = {},
  ): Promise<StartedConsumer> {
    const events: TransportConsumerEvent[] = [];
    const groupId = extra.groupId ?? uniqueName('group');
    if (!this.groups.includes(groupId)) this.groups.push(groupId);
    const handle = attachKafkaConsumer(this.acceptor, {
      connection: this.connection,
      topic,
      groupId,
      consumer,
      ...fastGroup,
      maxWaitTimeMs: 200,
      retryBackoff: { initialMs: 50, maxMs: 200 },
      observer: (event) => events.push(event),
      ...extra,
    });
    this.running.push(handle);
    await handle.ready();
    return { handle, groupId, events };
  }

  /** True once the group committed every partition of `topic` up to its end offset. */
  fullyCommitted(groupId: string, topic: string): Promise<boolean> {
    return fullyCommitted(this.connection, groupId, topic);
  }

  /** Waits until the group committed every partition of `topic` up to its end offset. */
  waitFullyCommitted(groupId: string, topic: string): Promise<void> {
    return waitFullyCommitted(this.connection, groupId, topic);
  }

  /** Deletes `topic` in close(), for topics a test creates itself. */
  ownTopic(topic: string): void {
    this.topics.push(topic);
  }

  async close(): Promise<void> {
    await Promise.all(this.running.map((consumer) => consumer.close()));
    await this.raw.disconnect();
    await deleteGroups(this.connection, this.groups);
    await deleteTopics(this.connection, this.topics);
    await this.acceptor.drop();
  }
}

/** The summed `count` of the events of one type (`accepted`: new and duplicate records). */
export function eventSum(
  events: readonly TransportConsumerEvent[],
  type: TransportConsumerEvent['type'],
): number {
  return events.reduce(
    (total, event) => total + (event.type === type && 'count' in event ? event.count : 0),
    0,
  );
}
