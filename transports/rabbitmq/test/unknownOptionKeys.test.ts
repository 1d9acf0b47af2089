import {
  RabbitConnection,
  RabbitPublisher,
  attachRabbitConsumer,
  workQueueNames,
  type RabbitConsumerOptions,
} from '@ferry/rabbitmq';
import { describeOptionTable, misspelt, wrongType } from '../../../test-support/optionTables';

/**
 * Every public entry point of @ferry/rabbitmq that takes an options object, with a misspelt key
 * and a wrongly typed value: each is refused with FERRY_CONFIG_INVALID naming the option's path,
 * synchronously, before connecting (the URL below has no broker).
 */
const url = 'amqp://127.0.0.1:1';
const acceptor = { maxPayloadBytes: 1024, acceptMany: async () => [] };
const base = { connection: url, queue: 'q', consumer: 'c' } as const;
const consumer = (extra: Record<string, unknown>) =>
  attachRabbitConsumer(acceptor, { ...base, ...extra } as RabbitConsumerOptions);

describe('a misspelt option key is refused, naming its path', () => {
  describeOptionTable([
    misspelt('RabbitConnection', 'heartbeat', () => new RabbitConnection({ url, heartbeat: 5 } as never)),
    misspelt(
      'RabbitConnection reconnectBackoff',
      'reconnectBackoff.initialMS',
      () => new RabbitConnection({ url, reconnectBackoff: { initialMS: 5 } } as never),
    ),
    misspelt(
      'RabbitPublisher',
      'confirmTimeout',
      () => new RabbitPublisher(url, { confirmTimeout: 5 } as never),
    ),
    misspelt(
      'RabbitPublisher routes',
      'routes.order.exchnage',
      () => new RabbitPublisher(url, { routes: { order: { exchnage: 'x' } } } as never),
    ),
    misspelt('attachRabbitConsumer', 'prefetchCount', () => consumer({ prefetchCount: 5 })),
    misspelt('attachRabbitConsumer retryBackoff', 'retryBackoff.maxMS', () =>
      consumer({ retryBackoff: { maxMS: 5 } }),
    ),
    misspelt('attachRabbitConsumer deadLetter', 'deadLetter.exhange', () =>
      consumer({ deadLetter: { exhange: 'x' } }),
    ),
    misspelt('attachRabbitConsumer connection', 'connection.heartbeat', () =>
      consumer({ connection: { url, heartbeat: 5 } }),
    ),
    misspelt('workQueueNames', 'retryQueues', () =>
      workQueueNames({ queue: 'q', retryQueues: 'x' } as never),
    ),
  ]);
});

describe('a wrongly typed option value is refused, naming its path and showing the value', () => {
  describeOptionTable([
    wrongType(
      'RabbitConnection',
      'heartbeatSeconds',
      '"50" (string)',
      () => new RabbitConnection({ url, heartbeatSeconds: '50' as never }),
    ),
    wrongType('RabbitConnection', 'url', '5 (number)', () => new RabbitConnection({ url: 5 as never })),
    wrongType(
      'RabbitConnection',
      'connectionName',
      '5 (number)',
      () => new RabbitConnection({ url, connectionName: 5 as never }),
    ),
    wrongType(
      'RabbitConnection reconnectBackoff',
      'reconnectBackoff.multiplier',
      'NaN (number)',
      () => new RabbitConnection({ url, reconnectBackoff: { multiplier: Number.NaN } }),
    ),
    wrongType(
      'RabbitConnection',
      'random',
      '"x" (string)',
      () => new RabbitConnection({ url, random: 'x' as never }),
    ),
    wrongType(
      'RabbitPublisher',
      'confirmTimeoutMs',
      '"50" (string)',
      () => new RabbitPublisher(url, { confirmTimeoutMs: '50' as never }),
    ),
    wrongType(
      'RabbitPublisher',
      'defaultDestination',
      '5 (number)',
      () => new RabbitPublisher(url, { defaultDestination: 5 as never }),
    ),
    wrongType(
      'RabbitPublisher',
      'observer',
      '"log" (string)',
      () => new RabbitPublisher(url, { observer: 'log' as never }),
    ),
    wrongType(
      'RabbitPublisher routes',
      'routes.order.exchange',
      '5 (number)',
      () => new RabbitPublisher(url, { routes: { order: { exchange: 5 as never } } }),
    ),
    wrongType('attachRabbitConsumer', 'prefetch', '"50" (string)', () => consumer({ prefetch: '50' })),
    wrongType('attachRabbitConsumer', 'maxTransportRetries', '-1 (number)', () =>
      consumer({ maxTransportRetries: -1 }),
    ),
    wrongType('attachRabbitConsumer', 'observer', '"log" (string)', () => consumer({ observer: 'log' })),
    wrongType('attachRabbitConsumer', 'identity', '"id" (string)', () => consumer({ identity: 'id' })),
    wrongType('attachRabbitConsumer', 'declareTopology', '"no" (string)', () =>
      consumer({ declareTopology: 'no' }),
    ),
    wrongType('attachRabbitConsumer', 'acceptMissingContentType', '"yes" (string)', () =>
      consumer({ acceptMissingContentType: 'yes' }),
    ),
    wrongType('attachRabbitConsumer', 'contentTypes', '"application/json" (string)', () =>
      consumer({ contentTypes: 'application/json' }),
    ),
    wrongType('attachRabbitConsumer retryBackoff', 'retryBackoff.jitter', '"half" (string)', () =>
      consumer({ retryBackoff: { jitter: 'half' } }),
    ),
    wrongType('attachRabbitConsumer connection', 'connection.heartbeatSeconds', '"50" (string)', () =>
      consumer({ connection: { url, heartbeatSeconds: '50' } }),
    ),
    wrongType('attachRabbitConsumer', 'connection', '5 (number)', () => consumer({ connection: 5 })),
  ]);
});

/** A NestJS Logger's shape: log / warn / error / debug / verbose, no info. */
const nestLikeLogger = { log() {}, warn() {}, error() {}, debug() {}, verbose() {} };

/** A logger without one of pino's four methods (review 63) would lose those lines in guardLogger, silently. */
describe('a logger without debug(), info(), warn() and error() is refused, naming its path', () => {
  describeOptionTable([
    wrongType(
      'RabbitConnection',
      'logger',
      '"pino" (string)',
      () => new RabbitConnection({ url, logger: 'pino' as never }),
    ),
    wrongType(
      'RabbitPublisher',
      'logger',
      'missing info()',
      () => new RabbitPublisher(url, { logger: nestLikeLogger as never }),
    ),
    wrongType('attachRabbitConsumer', 'logger', 'missing info()', () => consumer({ logger: nestLikeLogger })),
    wrongType('attachRabbitConsumer connection', 'connection.logger', '"pino" (string)', () =>
      consumer({ connection: { url, logger: 'pino' } }),
    ),
  ]);
});

/**
 * A required option given explicitly as `undefined` (a configuration loader's missing field), or
 * of the wrong type, and a required argument left out: refused at construction with
 * FERRY_CONFIG_INVALID naming it, never a TypeError later.
 */
describe('a required option given as undefined or of the wrong type is refused at construction', () => {
  describeOptionTable([
    wrongType('RabbitConnection', 'options', 'got undefined', () => new RabbitConnection(undefined as never)),
    wrongType(
      'RabbitConnection',
      'url',
      'got undefined',
      () => new RabbitConnection({ url: undefined as never }),
    ),
    wrongType(
      'RabbitPublisher',
      'connection',
      'got undefined',
      () => new RabbitPublisher(undefined as never),
    ),
    wrongType('RabbitPublisher', 'connection', '5 (number)', () => new RabbitPublisher(5 as never)),
    wrongType('attachRabbitConsumer', 'inbox', 'got undefined', () =>
      attachRabbitConsumer(undefined as never, base),
    ),
    wrongType('attachRabbitConsumer', 'inbox', '{} (object)', () => attachRabbitConsumer({} as never, base)),
    wrongType('attachRabbitConsumer', 'options', 'got undefined', () =>
      attachRabbitConsumer(acceptor, undefined as never),
    ),
    wrongType('attachRabbitConsumer', 'connection', 'got undefined', () =>
      consumer({ connection: undefined }),
    ),
    wrongType('attachRabbitConsumer', 'queue', 'got undefined', () => consumer({ queue: undefined })),
    wrongType('attachRabbitConsumer', 'consumer', 'got undefined', () => consumer({ consumer: undefined })),
  ]);
});
