import {
  SqsConnection,
  SqsPublisher,
  attachSqsConsumer,
  declareQueue,
  type AttachConsumerOptions,
} from '@ferry/sqs';
import { describeOptionTable, misspelt, wrongType } from '../../../test-support/optionTables';

/**
 * Every public entry point of @ferry/sqs that takes an options object, with a misspelt key and a
 * wrongly typed value: each is refused with FERRY_CONFIG_INVALID naming the option's path,
 * synchronously, before any request (the endpoint below has no service).
 */
const endpoint = 'http://127.0.0.1:1';
const connection = new SqsConnection({ endpoint, region: 'us-east-1' });
const acceptor = { maxPayloadBytes: 1024, acceptMany: async () => [] };
const consumer = (extra: Record<string, unknown>) =>
  attachSqsConsumer(acceptor, {
    connection,
    queueUrl: `${endpoint}/000000000000/q`,
    consumer: 'c',
    ...extra,
  } as AttachConsumerOptions);

afterAll(() => connection.close());

describe('a misspelt option key is refused, naming its path', () => {
  describeOptionTable([
    misspelt('SqsConnection', 'endpointUrl', () => new SqsConnection({ endpointUrl: endpoint } as never)),
    misspelt(
      'SqsConnection credentials',
      'credentials.secretKey',
      () => new SqsConnection({ credentials: { accessKeyId: 'a', secretKey: 's' } } as never),
    ),
    misspelt(
      'SqsPublisher',
      'defaultQueu',
      () => new SqsPublisher(connection, { defaultQueu: 'q' } as never),
    ),
    misspelt('attachSqsConsumer', 'waitTime', () => consumer({ waitTime: 5 })),
    misspelt('attachSqsConsumer deadLetter', 'deadLetter.queue', () =>
      consumer({ deadLetter: { mode: 'queue', queueUrl: 'u', queue: 'x' } }),
    ),
    misspelt('attachSqsConsumer retryBackoff', 'retryBackoff.maxMS', () =>
      consumer({ retryBackoff: { maxMS: 5 } }),
    ),
    misspelt('declareQueue', 'fifoQueue', () =>
      declareQueue(connection, { name: 'q', fifoQueue: true } as never),
    ),
    misspelt('declareQueue deadLetter', 'deadLetter.maxReceives', () =>
      declareQueue(connection, { name: 'q', deadLetter: { maxReceives: 3 } } as never),
    ),
  ]);
});

describe('a wrongly typed option value is refused, naming its path and showing the value', () => {
  describeOptionTable([
    wrongType(
      'SqsConnection',
      'maxAttempts',
      '"3" (string)',
      () => new SqsConnection({ maxAttempts: '3' as never }),
    ),
    wrongType(
      'SqsConnection',
      'endpoint',
      '9324 (number)',
      () => new SqsConnection({ endpoint: 9324 as never }),
    ),
    wrongType('SqsConnection', 'region', '5 (number)', () => new SqsConnection({ region: 5 as never })),
    wrongType(
      'SqsPublisher',
      'maxBatchBytes',
      '"50" (string)',
      () => new SqsPublisher(connection, { maxBatchBytes: '50' as never }),
    ),
    wrongType(
      'SqsPublisher',
      'observer',
      '"log" (string)',
      () => new SqsPublisher(connection, { observer: 'log' as never }),
    ),
    wrongType('attachSqsConsumer', 'maxBatchSize', '"5" (string)', () => consumer({ maxBatchSize: '5' })),
    wrongType('attachSqsConsumer', 'waitTimeSeconds', '-1 (number)', () => consumer({ waitTimeSeconds: -1 })),
    wrongType('attachSqsConsumer', 'observer', '"log" (string)', () => consumer({ observer: 'log' })),
    wrongType('attachSqsConsumer', 'connection', `"${endpoint}" (string)`, () =>
      consumer({ connection: endpoint }),
    ),
    wrongType('attachSqsConsumer deadLetter', 'deadLetter.mode', '"dlq" (string)', () =>
      consumer({ deadLetter: { mode: 'dlq' } }),
    ),
    wrongType('declareQueue', 'visibilityTimeoutSeconds', '"30" (string)', () =>
      declareQueue(connection, { name: 'q', visibilityTimeoutSeconds: '30' as never }),
    ),
    wrongType('declareQueue', 'fifo', '"yes" (string)', () =>
      declareQueue(connection, { name: 'q.fifo', fifo: 'yes' as never }),
    ),
    wrongType('declareQueue deadLetter', 'deadLetter.maxReceiveCount', '"3" (string)', () =>
      declareQueue(connection, { name: 'q', deadLetter: { maxReceiveCount: '3' as never } }),
    ),
  ]);
});

/** A NestJS Logger's shape: log / warn / error / debug / verbose, no info. */
const nestLikeLogger = { log() {}, warn() {}, error() {}, debug() {}, verbose() {} };

/** A logger without one of pino's four methods (review 63) would lose those lines in guardLogger, silently. */
describe('a logger without debug(), info(), warn() and error() is refused, naming its path', () => {
  describeOptionTable([
    wrongType(
      'SqsConnection',
      'logger',
      '"pino" (string)',
      () => new SqsConnection({ endpoint, region: 'us-east-1', logger: 'pino' as never }),
    ),
    wrongType(
      'SqsPublisher',
      'logger',
      'missing info()',
      () => new SqsPublisher(connection, { logger: nestLikeLogger as never }),
    ),
    wrongType('attachSqsConsumer', 'logger', 'missing info()', () => consumer({ logger: nestLikeLogger })),
  ]);
});

/**
 * A required option given explicitly as `undefined` (a configuration loader's missing field), or
 * of the wrong type, and a required argument left out: refused at construction with
 * FERRY_CONFIG_INVALID naming it, never a TypeError later.
 */
describe('a required option given as undefined or of the wrong type is refused at construction', () => {
  const queueUrl = `${endpoint}/000000000000/q`;
  describeOptionTable([
    wrongType('SqsPublisher', 'connection', 'got undefined', () => new SqsPublisher(undefined as never)),
    wrongType(
      'SqsPublisher',
      'connection',
      '"http://127.0.0.1:1" (string)',
      () => new SqsPublisher(endpoint as never),
    ),
    wrongType('attachSqsConsumer', 'inbox', 'got undefined', () =>
      attachSqsConsumer(undefined as never, { connection, queueUrl, consumer: 'c' }),
    ),
    wrongType('attachSqsConsumer', 'inbox', '{} (object)', () =>
      attachSqsConsumer({} as never, { connection, queueUrl, consumer: 'c' }),
    ),
    wrongType('attachSqsConsumer', 'options', 'got undefined', () =>
      attachSqsConsumer(acceptor, undefined as never),
    ),
    wrongType('attachSqsConsumer', 'connection', 'got undefined', () => consumer({ connection: undefined })),
    wrongType('attachSqsConsumer', 'queueUrl', 'got undefined', () => consumer({ queueUrl: undefined })),
    wrongType('attachSqsConsumer', 'consumer', 'got undefined', () => consumer({ consumer: undefined })),
  ]);
});
