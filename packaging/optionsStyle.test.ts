import {
  createAuditLog,
  createOutboxAdmin,
  createRelay,
  FerryConfigError,
  InboxAdmin,
  resolveInboxOptions,
  resolveOutboxOptions,
  type SqlExecutor,
} from '@ferry/core';
import { resolveConnectionOptions as rabbitConnection } from '../transports/rabbitmq/src/options';
import { resolveConnectionOptions as kafkaConnection } from '../transports/kafka/src/connection';
import { resolvePublisherOptions as sqsPublisher } from '../transports/sqs/src/options';

// Every method ferry calls on an executor (EXECUTOR_METHODS): one without transaction() is refused as `db`.
const db = {
  query: async () => [],
  execute: async () => 0,
  transaction: async (work: (tx: unknown) => Promise<unknown>) => work(db),
} as unknown as SqlExecutor;
const publisher = { publish: async () => [] };

function configError(work: () => unknown): FerryConfigError {
  try {
    work();
  } catch (error) {
    if (error instanceof FerryConfigError) return error;
    throw error;
  }
  throw new Error('expected a FerryConfigError');
}

describe('every options object is checked the same way', () => {
  it.each([
    [
      'createRelay, a misspelt top-level key',
      () => createRelay({ db, publisher, pollIntervall: 5 } as never),
      'pollIntervall',
    ],
    [
      'createRelay, a misspelt option',
      () => createRelay({ db, publisher, options: { pollIntervall: 5 } as never }),
      'pollIntervall',
    ],
    [
      'createRelay, a misspelt nested option',
      () => resolveOutboxOptions({ retry: { maxRetry: 3 } as never }),
      'retry.maxRetry',
    ],
    ['Inbox, a misspelt option', () => resolveInboxOptions({ handler: {} } as never), 'handler'],
    [
      'Inbox, a misspelt worker option',
      () => resolveInboxOptions({ worker: { pollInterval: 5 } as never }),
      'worker.pollInterval',
    ],
    [
      'RabbitMQ connection',
      () => rabbitConnection({ url: 'amqp://127.0.0.1', heartbeat: 5 } as never),
      'heartbeat',
    ],
    [
      'Kafka connection',
      () => kafkaConnection({ brokers: ['127.0.0.1:9092'], clientID: 'x' } as never),
      'clientID',
    ],
    ['SQS publisher', () => sqsPublisher({ defaultQueu: 'q' } as never), 'defaultQueu'],
    [
      'createOutboxAdmin, the relay-style statementTimeout',
      () => createOutboxAdmin(db, { statementTimeout: 500 } as never),
      'statementTimeout',
    ],
    ['InboxAdmin', () => new InboxAdmin(db, { statementTimeout: 500 } as never), 'statementTimeout'],
    ['createAuditLog', () => createAuditLog(db, { timeoutMs: 500 } as never), 'timeoutMs'],
  ])('%s is rejected as not a known option', (_what, work, option) => {
    const error = configError(work);
    expect(error).toMatchObject({ code: 'FERRY_CONFIG_INVALID', option });
    expect(error.message).toContain('is not a known option');
  });

  it.each([
    [
      'createRelay pollInterval',
      () => resolveOutboxOptions({ pollInterval: '1000' as never }),
      'pollInterval',
    ],
    [
      'Inbox worker.concurrency',
      () => resolveInboxOptions({ worker: { concurrency: '1000' as never } }),
      'worker.concurrency',
    ],
    [
      'Inbox maxPayloadBytes',
      () => resolveInboxOptions({ maxPayloadBytes: '1000' as never }),
      'maxPayloadBytes',
    ],
    [
      'RabbitMQ heartbeatSeconds',
      () => rabbitConnection({ url: 'amqp://x', heartbeatSeconds: '1000' as never }),
      'heartbeatSeconds',
    ],
    [
      'Kafka requestTimeoutMs',
      () => kafkaConnection({ brokers: ['h:1'], requestTimeoutMs: '1000' as never }),
      'requestTimeoutMs',
    ],
    ['SQS maxBatchBytes', () => sqsPublisher({ maxBatchBytes: '1000' as never }), 'maxBatchBytes'],
    [
      'createOutboxAdmin statementTimeoutMs',
      () => createOutboxAdmin(db, { statementTimeoutMs: '1000' as never }),
      'statementTimeoutMs',
    ],
  ])('%s given as a string shows the value as received', (_what, work, option) => {
    const error = configError(work);
    expect(error).toMatchObject({ code: 'FERRY_CONFIG_INVALID', option });
    expect(error.message).toContain('got "1000" (string)');
  });

  it('createRelay refuses a missing publisher or database by name', () => {
    expect(configError(() => createRelay({ db } as never))).toMatchObject({ option: 'publisher' });
    expect(
      configError(() => createRelay({ db, publisher: { send: () => undefined } } as never)).message,
    ).toContain('must be a Publisher');
    expect(configError(() => createRelay({ publisher } as never))).toMatchObject({ option: 'db' });
  });

  it('shows other received values by type', () => {
    expect(configError(() => resolveOutboxOptions({ batchSize: 1.5 })).message).toContain('got 1.5 (number)');
    expect(configError(() => createRelay({ db, publisher: null } as never)).message).toContain('got null');
    expect(configError(() => resolveInboxOptions({ worker: { enabled: 'yes' as never } })).message).toContain(
      'got "yes" (string)',
    );
  });
});
