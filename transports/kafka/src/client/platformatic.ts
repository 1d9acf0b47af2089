import { FerryConfigError } from '@ferry/core';
import { optionalPeerError } from '@ferry/core/transport';
import type { ResolvedConnectionOptions } from '../connectionOptions';
import { closedOnAbort, destroyedOnAbort } from './closedOnAbort';
import { ClientSockets } from './clientSockets';
import { CLEANUP_POLICY, TOPIC_RESOURCE } from './topicConfigs';
import { waitForLeaders } from './leaders';
import { decoratePlatformaticCodecs } from './platformaticCodecs';
import { PlatformaticConsumer } from './platformaticConsumer';
import { SequencedSends } from './sequencedSends';
import type { Partitioner } from '@platformatic/kafka';
import type { PlatformaticBase, PlatformaticKafka } from './platformaticTypes';
import type {
  DriverAdmin,
  DriverConsumer,
  DriverConsumerOptions,
  DriverProducer,
  SequencedProducer,
  DriverProducerOptions,
  KafkaClientDriver,
  ProducedRecord,
  RecordHeaders,
  TopicCreation,
  TopicRecords,
} from './types';

let loaded: PlatformaticKafka | null = null;

const PLATFORMATIC_INSTALL = 'npm install @platformatic/kafka@^1.35.0';

/**
 * The peer range (^1.35.0), checked on the version the loaded module reports: npm refuses another
 * one at install, but pnpm and yarn only warn, and so does npm with --legacy-peer-deps. A 2.x on
 * Node 20 failed each connect with "Promise.withResolvers is not a function", which a publish
 * reported `unavailable` for ever (review 106); outside the range is a configuration error.
 */
function checkPlatformaticVersion(version: unknown): void {
  const match = typeof version === 'string' ? /^(\d+)\.(\d+)\.\d+$/.exec(version) : null;
  if (match && Number(match[1]) === 1 && Number(match[2]) >= 35) return;
  const found = typeof version === 'string' ? version : 'a version that reports none';
  throw new FerryConfigError(
    'client',
    `'platformatic' needs @platformatic/kafka ^1.35.0, but @platformatic/kafka ${found} is installed: ${PLATFORMATIC_INSTALL}`,
  );
}

/**
 * Where a record goes, as the Java client (and kafkajs) places it: a keyed record by murmur2 of
 * its key bytes masked positive, modulo the partition count (the client takes the modulo); a
 * keyless one round robin. The client's own default takes murmur2 unsigned, which puts about half
 * of the keys on another partition than a Java producer of the same key, or ferry on kafkajs.
 */
function javaPlacement(): Partitioner<Buffer, Buffer, Buffer, Buffer> {
  const { compatibilityPartitioner } = platformaticKafka();
  let next = 0;
  return (message, key) => {
    if (key !== undefined) return compatibilityPartitioner(message, key);
    next = (next + 1) % 0x7fffffff;
    return next;
  };
}

/**
 * @platformatic/kafka is an ES module, which Node 20.19+ loads with `require`. It is loaded only
 * when a connection asks for this client, so kafkajs users never load it.
 */
export function platformaticKafka(): PlatformaticKafka {
  if (loaded === null) {
    let module: PlatformaticKafka;
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      module = require('@platformatic/kafka') as PlatformaticKafka;
    } catch (error) {
      throw optionalPeerError(error, {
        peer: '@platformatic/kafka',
        option: 'client',
        reason: `'platformatic' needs the optional peer dependency @platformatic/kafka 1.x: ${PLATFORMATIC_INSTALL}`,
      });
    }
    checkPlatformaticVersion(module.clientSoftwareVersion);
    decoratePlatformaticCodecs(module);
    loaded = module;
  }
  return loaded;
}

const MIN_IDEMPOTENT_RETRIES = 2;

/** The client's own default wait between retries of an operation. */
const CLIENT_RETRY_DELAY_MS = 1_000;

/**
 * The client's wait before it retries an operation, 0 once the client is closed. The client
 * cancels the retries waiting when close() comes, but an operation that fails after close()
 * (its connection closed under it) schedules a new one; at 0 ms those retries end at once,
 * instead of a timer keeping the process up and the client working after ferry's close().
 */
export function retryDelayUntilClosed(given: unknown): PlatformaticBase['retryDelay'] {
  return (client, ...rest) => {
    if ((client as { readonly closed?: unknown }).closed === true) return 0;
    if (typeof given === 'function') return (given as PlatformaticBase['retryDelay'])(client, ...rest);
    return typeof given === 'number' ? given : CLIENT_RETRY_DELAY_MS;
  };
}

/** @platformatic/kafka 1.x behind ferry's client interface. */
export class PlatformaticDriver implements KafkaClientDriver {
  readonly name = 'platformatic';
  private readonly base: PlatformaticBase;

  constructor(options: ResolvedConnectionOptions) {
    this.base = {
      ...options.kafkaConfig,
      clientId: options.clientId,
      bootstrapBrokers: [...options.brokers],
      connectTimeout: options.connectionTimeoutMs,
      requestTimeout: options.requestTimeoutMs,
      timeout: options.requestTimeoutMs,
      retryDelay: retryDelayUntilClosed(options.kafkaConfig.retryDelay),
    };
  }

  producer(options: DriverProducerOptions): SequencedProducer {
    return new SequencedSends(() => this.clientProducer(options), options.replaced);
  }

  clientProducer(options: DriverProducerOptions): DriverProducer {
    const { Producer } = platformaticKafka();
    const producer = new Producer({
      ...this.base,
      idempotent: true,
      acks: -1,
      partitioner: javaPlacement(),
      // An idempotent producer given 0 or 1 retries retries forever (even to a missing topic,
      // even after close); 2 is the fewest that stays bounded.
      retries: Math.max(MIN_IDEMPOTENT_RETRIES, options.retries),
      autocreateTopics: false,
    });
    const sockets = new ClientSockets(producer, true);
    return {
      // The client connects on first use; asking for the brokers' API versions connects now.
      connect: async () => {
        await closedOnAbort(
          options.signal,
          () => producer.close(),
          () => producer.listApis(),
        );
      },
      disconnect: () => producer.close(),
      destroy: () => sockets.destroy(),
      onDisconnect: (listener) => void producer.on('client:broker:disconnect', listener),
      send: async (batches: readonly TopicRecords[]) => {
        const messages = batches.flatMap(({ topic, records }) =>
          records.map((record) => toPlatformaticMessage(topic, record)),
        );
        await producer.send({ messages, acks: -1, idempotent: true, autocreateTopics: false });
      },
    };
  }

  consumer(options: DriverConsumerOptions): DriverConsumer {
    return new PlatformaticConsumer(platformaticKafka(), this.base, options);
  }

  async admin(signal?: AbortSignal): Promise<DriverAdmin> {
    const { Admin } = platformaticKafka();
    const admin = new Admin({ ...this.base });
    const sockets = new ClientSockets(admin);
    try {
      // The client connects on first use; asking for the brokers' API versions connects now.
      if (signal)
        await closedOnAbort(
          signal,
          () => admin.close(),
          () => admin.listApis(),
        );
      else await admin.listApis();
    } catch (error) {
      await admin.close().catch(() => undefined);
      throw error;
    }
    const destroy = () => sockets.destroy();
    const unwatch = destroyedOnAbort(signal, destroy);
    return {
      listTopics: () => admin.listTopics(),
      cleanupPolicies: async (topics) => {
        const described = await admin.describeConfigs({
          resources: topics.map((resourceName) => ({
            resourceType: TOPIC_RESOURCE,
            resourceName,
            configurationKeys: [CLEANUP_POLICY],
          })),
        });
        const policies = new Map<string, string>();
        for (const resource of described) {
          const entry = resource.configs.find((config) => config.name === CLEANUP_POLICY);
          if (entry?.value != null) policies.set(resource.resourceName, entry.value);
        }
        return policies;
      },
      createTopics: async (topics: readonly TopicCreation[]) => {
        for (const topic of topics) {
          await admin.createTopics({
            topics: [topic.topic],
            partitions: topic.numPartitions,
            replicas: topic.replicationFactor,
            configs: [...topic.configEntries],
          });
        }
        const names = topics.map((topic) => topic.topic);
        await waitForLeaders(() => haveLeaders(admin, names));
      },
      deleteTopics: (topics) => admin.deleteTopics({ topics: [...topics] }),
      deleteGroups: (groups) => admin.deleteGroups({ groups: [...groups] }),
      disconnect: () => {
        unwatch();
        return admin.close();
      },
      destroy,
    };
  }
}

type PlatformaticAdmin = InstanceType<PlatformaticKafka['Admin']>;

/** True once every partition of `topics` has a leader in fresh metadata. */
async function haveLeaders(admin: PlatformaticAdmin, topics: readonly string[]): Promise<boolean> {
  const metadata = await admin.metadata({ topics: [...topics], forceUpdate: true });
  return topics.every((topic) => {
    const partitions = metadata.topics.get(topic)?.partitions ?? [];
    return partitions.length > 0 && partitions.every((partition) => partition.leader >= 0);
  });
}

const asBuffer = (value: Buffer | string): Buffer => (Buffer.isBuffer(value) ? value : Buffer.from(value));

/**
 * Every value of every header, in order. The client keeps headers in a map keyed by Buffer, which
 * compares by identity: a name given more than once gets a key of its own per value (a dead-letter
 * copy of a record with a repeated header keeps all of them, as kafkajs's producer does).
 */
function toHeaders(headers: RecordHeaders): Map<Buffer, Buffer> {
  const out = new Map<Buffer, Buffer>();
  for (const [name, value] of Object.entries(headers)) {
    for (const one of Array.isArray(value) ? value : [value]) {
      if (one !== undefined) out.set(Buffer.from(name), asBuffer(one));
    }
  }
  return out;
}

function toPlatformaticMessage(topic: string, record: ProducedRecord) {
  return {
    topic,
    key: record.key === null ? undefined : asBuffer(record.key),
    value: record.value === null ? undefined : asBuffer(record.value),
    headers: toHeaders(record.headers),
  };
}
