import { logLevel } from 'kafkajs';
import { KafkaConnection } from '../src';
import { kafkajsLogMethod } from '../src/logLevels';

const line = (namespace: string, level: logLevel, message: string, fields: Record<string, unknown> = {}) => ({
  namespace,
  level,
  log: { timestamp: '2026-12-01T00:00:00Z', logger: 'kafkajs', message, ...fields },
});

describe('kafkajs log levels', () => {
  it('lowers a group rebalance to info', () => {
    const entry = line('Runner', logLevel.ERROR, 'The group is rebalancing, re-joining', {
      error: 'The group is rebalancing, so a rejoin is needed',
    });
    expect(kafkajsLogMethod(entry)).toBe('info');
  });

  it('lowers lines kafkajs retries itself, and connection errors, to warn', () => {
    expect(
      kafkajsLogMethod(
        line('Consumer', logLevel.ERROR, 'Crash: KafkaJSNumberOfRetriesExceeded', {
          retryCount: 5,
          retryTime: 3000,
        }),
      ),
    ).toBe('warn');
    expect(
      kafkajsLogMethod(line('Connection', logLevel.ERROR, 'Connection error: connect ECONNREFUSED')),
    ).toBe('warn');
  });

  it('lowers the default-partitioner notice to debug', () => {
    expect(kafkajsLogMethod(line('', logLevel.WARN, 'KafkaJS v2.0.0 switched default partitioner.'))).toBe(
      'debug',
    );
  });

  it('keeps other errors as errors and never raises a level', () => {
    expect(kafkajsLogMethod(line('Producer', logLevel.ERROR, 'Failed to send messages'))).toBe('error');
    expect(kafkajsLogMethod(line('Connection', logLevel.DEBUG, 'Request Metadata'))).toBe('debug');
    expect(kafkajsLogMethod(line('Runner', logLevel.INFO, 'consumer rebalanced'))).toBe('info');
  });
});

describe("the kafkajs driver's log creator", () => {
  it('routes kafkajs lines to the ferry logger at the mapped level', () => {
    const calls: [string, string][] = [];
    const record =
      (method: string) =>
      (_fields: unknown, message?: string): void =>
        void calls.push([method, message ?? '']);
    const logger = {
      debug: record('debug'),
      info: record('info'),
      warn: record('warn'),
      error: record('error'),
    };
    const connection = new KafkaConnection({ brokers: ['127.0.0.1:9092'], logger, kafkaLogLevel: 'error' });
    const kafkajsLogger = connection.kafka.logger().namespace('Runner');
    kafkajsLogger.error('The group is rebalancing, re-joining', { error: 'rebalance in progress' });
    kafkajsLogger.error('Failed to send messages');
    expect(calls).toEqual([
      ['info', 'The group is rebalancing, re-joining'],
      ['error', 'Failed to send messages'],
    ]);
  });
});
