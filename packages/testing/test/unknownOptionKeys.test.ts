import {
  InMemoryBroker,
  InMemoryPublisher,
  attachInMemoryConsumer,
  drainInbox,
  dropDatabase,
  recreateDatabase,
  startFerryServices,
  waitForInboxRecord,
  waitUntil,
  type InMemoryConsumerOptions,
} from '@ferry/testing';
import { runTransportConformance, type TransportConformanceOptions } from '@ferry/testing/conformance';
import { describeOptionTable, misspelt, wrongType } from '../../../test-support/optionTables';

/**
 * Every public entry point of @ferry/testing that takes an options object, with a misspelt key
 * and a wrongly typed value: each is refused with FERRY_CONFIG_INVALID naming the option's path
 * before it does anything (no inbox round, no database, no service is reached).
 */
const unreachable = async (): Promise<never> => {
  throw new Error('the options should have been refused first');
};
const inbox = { runOnce: unreachable } as never;
const scope = { get: unreachable } as never;
const url = 'postgres://postgres@127.0.0.1:1/never_made';
const broker = new InMemoryBroker();
const acceptor = { maxPayloadBytes: 1024, acceptMany: async () => [] };
const consumer = (extra: Record<string, unknown>) =>
  attachInMemoryConsumer(acceptor, {
    broker,
    queue: 'q',
    consumer: 'c',
    ...extra,
  } as InMemoryConsumerOptions);
const conformance: TransportConformanceOptions = {
  name: 'options-table',
  transport: 'memory',
  system: 'memory',
  features: {
    deadLetter: { unsupported: 'not under test' },
    orderingPerKey: { unsupported: 'not under test' },
    redeliveryAfterRestart: { unsupported: 'not under test' },
    unroutableDetection: { unsupported: 'not under test' },
    heldCount: { unsupported: 'not under test' },
  },
  createTransport: unreachable,
};

describe('a misspelt option key is refused, naming its path', () => {
  describeOptionTable([
    misspelt('InMemoryPublisher', 'decider', () => new InMemoryPublisher({ decider: () => 'sent' } as never)),
    misspelt('attachInMemoryConsumer', 'maxBatch', () => consumer({ maxBatch: 5 })),
    misspelt('attachInMemoryConsumer retryBackoff', 'retryBackoff.maxMS', () =>
      consumer({ retryBackoff: { maxMS: 5 } }),
    ),
    misspelt('attachInMemoryConsumer reconnectBackoff', 'reconnectBackoff.maxMS', () =>
      consumer({ reconnectBackoff: { maxMS: 5 } }),
    ),
    misspelt('drainInbox', 'timeout', () => drainInbox(inbox, { timeout: 5 } as never)),
    misspelt('waitForInboxRecord', 'timeout', () => waitForInboxRecord(scope, 'id', { timeout: 5 } as never)),
    misspelt('waitUntil', 'interval', () => waitUntil('x', () => true, { interval: 5 } as never)),
    misspelt('recreateDatabase', 'migrationsDir', () =>
      recreateDatabase(url, { migrationsDir: 'x' } as never),
    ),
    misspelt('startFerryServices', 'service', () => startFerryServices({ service: ['postgres'] } as never)),
    misspelt('runTransportConformance', 'timeout', () =>
      runTransportConformance({ ...conformance, timeout: 5 } as never),
    ),
    misspelt('runTransportConformance features', 'features.ordering', () =>
      runTransportConformance({
        ...conformance,
        features: { ...conformance.features, ordering: true },
      } as never),
    ),
  ]);
});

describe('a wrongly typed option value is refused, naming its path and showing the value', () => {
  describeOptionTable([
    wrongType(
      'InMemoryPublisher',
      'decide',
      '"sent" (string)',
      () => new InMemoryPublisher({ decide: 'sent' as never }),
    ),
    wrongType(
      'InMemoryPublisher',
      'observer',
      '"log" (string)',
      () => new InMemoryPublisher({ observer: 'log' as never }),
    ),
    wrongType('attachInMemoryConsumer', 'maxBatchSize', '"5" (string)', () =>
      consumer({ maxBatchSize: '5' }),
    ),
    wrongType('drainInbox', 'maxRounds', '"5" (string)', () =>
      drainInbox(inbox, { maxRounds: '5' as never }),
    ),
    wrongType('drainInbox', 'timeoutMs', 'NaN (number)', () => drainInbox(inbox, { timeoutMs: Number.NaN })),
    wrongType('waitForInboxRecord', 'status', '"DONE" (string)', () =>
      waitForInboxRecord(scope, 'id', { status: 'DONE' as never }),
    ),
    wrongType('waitForInboxRecord', 'until', '"COMPLETED" (string)', () =>
      waitForInboxRecord(scope, 'id', { until: 'COMPLETED' as never }),
    ),
    wrongType('waitForInboxRecord', 'intervalMs', '-1 (number)', () =>
      waitForInboxRecord(scope, 'id', { intervalMs: -1 }),
    ),
    wrongType('waitUntil', 'timeoutMs', '"50" (string)', () =>
      waitUntil('x', () => true, { timeoutMs: '50' as never }),
    ),
    wrongType('recreateDatabase', 'migrationsDirs', '"db/migrations" (string)', () =>
      recreateDatabase(url, { migrationsDirs: 'db/migrations' as never }),
    ),
    wrongType('startFerryServices', 'timeoutMs', '"50" (string)', () =>
      startFerryServices({ timeoutMs: '50' as never }),
    ),
    wrongType('runTransportConformance', 'timeoutMs', '"50" (string)', () =>
      runTransportConformance({ ...conformance, timeoutMs: '50' as never }),
    ),
    wrongType('runTransportConformance', 'createTransport', '"memory" (string)', () =>
      runTransportConformance({ ...conformance, createTransport: 'memory' as never }),
    ),
  ]);
});

/** A NestJS Logger's shape: log / warn / error / debug / verbose, no info. */
const nestLikeLogger = { log() {}, warn() {}, error() {}, debug() {}, verbose() {} };

/** A logger without one of pino's four methods (review 63) would lose those lines in guardLogger, silently. */
describe('a logger without debug(), info(), warn() and error() is refused, naming its path', () => {
  describeOptionTable([
    wrongType('attachInMemoryConsumer', 'logger', 'missing info()', () =>
      consumer({ logger: nestLikeLogger }),
    ),
  ]);
});

/**
 * A required option given explicitly as `undefined`, or of the wrong type, and a required argument
 * left out: refused at construction with FERRY_CONFIG_INVALID naming it, never a TypeError later.
 */
describe('a required option given as undefined or of the wrong type is refused at construction', () => {
  describeOptionTable([
    wrongType('attachInMemoryConsumer', 'inbox', 'got undefined', () =>
      attachInMemoryConsumer(undefined as never, { broker, queue: 'q', consumer: 'c' }),
    ),
    wrongType('attachInMemoryConsumer', 'inbox', '{} (object)', () =>
      attachInMemoryConsumer({} as never, { broker, queue: 'q', consumer: 'c' }),
    ),
    wrongType('attachInMemoryConsumer', 'options', 'got undefined', () =>
      attachInMemoryConsumer(acceptor, undefined as never),
    ),
    wrongType('attachInMemoryConsumer', 'broker', 'got undefined', () => consumer({ broker: undefined })),
    wrongType('attachInMemoryConsumer', 'consumer', 'got undefined', () => consumer({ consumer: undefined })),
    wrongType('drainInbox', 'inbox', 'got undefined', () => drainInbox(undefined as never)),
    wrongType('drainInbox', 'inbox', '{} (object)', () => drainInbox({} as never)),
    wrongType('waitForInboxRecord', 'scope', 'got null', () => waitForInboxRecord(null as never, 'id')),
    wrongType('waitForInboxRecord', 'scope', '{} (object)', () => waitForInboxRecord({} as never, 'id')),
    wrongType('recreateDatabase', 'url', 'got undefined', () => recreateDatabase(undefined as never)),
    wrongType('dropDatabase', 'url', '5 (number)', () => dropDatabase(5 as never)),
    wrongType('waitUntil', 'probe', 'got undefined', () => waitUntil('x', undefined as never, 5)),
    wrongType('waitUntil', 'probe', '"ready" (string)', () => waitUntil('x', 'ready' as never, 5)),
  ]);
});
