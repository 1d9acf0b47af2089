import {
  KafkaConnection,
  KafkaPublisher,
  attachKafkaConsumer,
  ensureTopics,
  type ConsumerOptions,
} from '@ferry/kafka';
import { describeOptionTable, misspelt, wrongType } from '../../../test-support/optionTables';

/**
 * Every public entry point of @ferry/kafka that takes an options object, with a misspelt key and
 * a wrongly typed value: each is refused with FERRY_CONFIG_INVALID naming the option's path,
 * synchronously, before connecting (nothing here connects: the connection is never opened).
 */
const brokers = ['127.0.0.1:1'];
const connection = new KafkaConnection({ brokers });
const acceptor = { maxPayloadBytes: 1024, acceptMany: async () => [] };
const consumer = (extra: Record<string, unknown>) =>
  attachKafkaConsumer(acceptor, {
    connection,
    topic: 't',
    groupId: 'g',
    consumer: 'c',
    ...extra,
  } as ConsumerOptions);

describe('a misspelt option key is refused, naming its path', () => {
  describeOptionTable([
    misspelt('KafkaConnection', 'clientID', () => new KafkaConnection({ brokers, clientID: 'x' } as never)),
    misspelt(
      'KafkaPublisher',
      'confirmTimeout',
      () => new KafkaPublisher(connection, { confirmTimeout: 5 } as never),
    ),
    misspelt('attachKafkaConsumer', 'groupID', () => consumer({ groupID: 'g' })),
    misspelt('attachKafkaConsumer deadLetter', 'deadLetter.topics', () =>
      consumer({ deadLetter: { topics: 'd' } }),
    ),
    misspelt('attachKafkaConsumer retryBackoff', 'retryBackoff.maxMS', () =>
      consumer({ retryBackoff: { maxMS: 5 } }),
    ),
    misspelt('attachKafkaConsumer reconnectBackoff', 'reconnectBackoff.initialMS', () =>
      consumer({ reconnectBackoff: { initialMS: 5 } }),
    ),
    misspelt('ensureTopics', 'topics[0].numPartitions', () =>
      ensureTopics(connection, [{ topic: 't', numPartitions: 3 } as never]),
    ),
  ]);
});

describe('a wrongly typed option value is refused, naming its path and showing the value', () => {
  describeOptionTable([
    wrongType(
      'KafkaConnection',
      'requestTimeoutMs',
      '"50" (string)',
      () => new KafkaConnection({ brokers, requestTimeoutMs: '50' as never }),
    ),
    wrongType(
      'KafkaConnection',
      'brokers',
      '"127.0.0.1:9092" (string)',
      () => new KafkaConnection({ brokers: '127.0.0.1:9092' as never }),
    ),
    wrongType(
      'KafkaConnection',
      'brokers[0]',
      '9092 (number)',
      () => new KafkaConnection({ brokers: [9092 as never] }),
    ),
    wrongType(
      'KafkaConnection',
      'kafkaConfig',
      '"x" (string)',
      () => new KafkaConnection({ brokers, kafkaConfig: 'x' as never }),
    ),
    wrongType(
      'KafkaPublisher',
      'producerRetries',
      'NaN (number)',
      () => new KafkaPublisher(connection, { producerRetries: Number.NaN }),
    ),
    wrongType(
      'KafkaPublisher',
      'observer',
      '"log" (string)',
      () => new KafkaPublisher(connection, { observer: 'log' as never }),
    ),
    wrongType('attachKafkaConsumer', 'maxBatchSize', '"50" (string)', () => consumer({ maxBatchSize: '50' })),
    wrongType('attachKafkaConsumer', 'sessionTimeoutMs', '-1 (number)', () =>
      consumer({ sessionTimeoutMs: -1 }),
    ),
    wrongType('attachKafkaConsumer', 'fromBeginning', '"yes" (string)', () =>
      consumer({ fromBeginning: 'yes' }),
    ),
    wrongType('attachKafkaConsumer', 'observer', '"log" (string)', () => consumer({ observer: 'log' })),
    wrongType('attachKafkaConsumer', 'identity', '"id" (string)', () => consumer({ identity: 'id' })),
    wrongType('attachKafkaConsumer', 'connection', '"127.0.0.1:9092" (string)', () =>
      consumer({ connection: '127.0.0.1:9092' }),
    ),
    wrongType('attachKafkaConsumer deadLetter', 'deadLetter.sendRetries', '"3" (string)', () =>
      consumer({ deadLetter: { sendRetries: '3' } }),
    ),
    wrongType('attachKafkaConsumer retryBackoff', 'retryBackoff.jitter', '"half" (string)', () =>
      consumer({ retryBackoff: { jitter: 'half' } }),
    ),
    wrongType('ensureTopics', 'topics[0].partitions', '"3" (string)', () =>
      ensureTopics(connection, [{ topic: 't', partitions: '3' as never }]),
    ),
  ]);
});

/** A NestJS Logger's shape: log / warn / error / debug / verbose, no info. */
const nestLikeLogger = { log() {}, warn() {}, error() {}, debug() {}, verbose() {} };

/** A logger without one of pino's four methods (review 63) would lose those lines in guardLogger, silently. */
describe('a logger without debug(), info(), warn() and error() is refused, naming its path', () => {
  describeOptionTable([
    wrongType(
      'KafkaConnection',
      'logger',
      '"pino" (string)',
      () => new KafkaConnection({ brokers, logger: 'pino' as never }),
    ),
    wrongType(
      'KafkaPublisher',
      'logger',
      'missing info()',
      () => new KafkaPublisher(connection, { logger: nestLikeLogger as never }),
    ),
    wrongType('attachKafkaConsumer', 'logger', 'missing info()', () => consumer({ logger: nestLikeLogger })),
  ]);
});

/**
 * A required option given explicitly as `undefined` (a configuration loader's missing field), or
 * of the wrong type, and a required argument left out: refused at construction with
 * FERRY_CONFIG_INVALID naming it, never a TypeError later.
 */
describe('a required option given as undefined or of the wrong type is refused at construction', () => {
  describeOptionTable([
    wrongType('KafkaConnection', 'options', 'got undefined', () => new KafkaConnection(undefined as never)),
    wrongType(
      'KafkaConnection',
      'brokers',
      'got undefined',
      () => new KafkaConnection({ brokers: undefined as never }),
    ),
    wrongType('KafkaPublisher', 'connection', 'got undefined', () => new KafkaPublisher(undefined as never)),
    wrongType(
      'KafkaPublisher',
      'connection',
      '"127.0.0.1:9092" (string)',
      () => new KafkaPublisher('127.0.0.1:9092' as never),
    ),
    wrongType('ensureTopics', 'connection', 'got undefined', () =>
      ensureTopics(undefined as never, [{ topic: 't' }]),
    ),
    wrongType('attachKafkaConsumer', 'inbox', 'got undefined', () =>
      attachKafkaConsumer(undefined as never, { connection, topic: 't', groupId: 'g', consumer: 'c' }),
    ),
    wrongType('attachKafkaConsumer', 'inbox', '{} (object)', () =>
      attachKafkaConsumer({} as never, { connection, topic: 't', groupId: 'g', consumer: 'c' }),
    ),
    wrongType('attachKafkaConsumer', 'options', 'got undefined', () =>
      attachKafkaConsumer(acceptor, undefined as never),
    ),
    wrongType('attachKafkaConsumer', 'connection', 'got undefined', () =>
      consumer({ connection: undefined }),
    ),
    wrongType('attachKafkaConsumer', 'groupId', 'got undefined', () => consumer({ groupId: undefined })),
    wrongType('attachKafkaConsumer', 'consumer', 'got undefined', () => consumer({ consumer: undefined })),
  ]);
});
