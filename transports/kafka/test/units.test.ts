import { FERRY_HEADERS, FerryConfigError, FerryError } from '@ferry/core';
import { KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError } from 'kafkajs';
import {
  DEFAULTS,
  KafkaPublisher,
  REJECT_REASONS,
  backoffDelay,
  classifyKafkaError,
  resolveConnectionOptions,
  resolveConsumerOptions,
  topicPartitionOffsetIdentity,
} from '../src';
import { decodeRecord, encodeOutboxMessage } from '../src/wire';
import { outboxMessage, silentLogger, testConnection } from './support';

function protocolError(type: string, retriable: boolean): KafkaJSProtocolError {
  return new KafkaJSProtocolError(Object.assign(new Error(type), { type, code: 1, retriable }));
}

describe('backoffDelay', () => {
  const policy = { initialMs: 100, maxMs: 1_000, multiplier: 2, jitter: 'none' } as const;

  test('grows by the multiplier per attempt and never exceeds maxMs', () => {
    expect([1, 2, 3, 4, 5, 50].map((attempt) => backoffDelay(attempt, policy))).toEqual([
      100, 200, 400, 800, 1_000, 1_000,
    ]);
  });

  test('full jitter draws from [0, delay] with the injected random source', () => {
    expect(backoffDelay(3, { ...policy, jitter: 'full' }, () => 0.5)).toBe(200);
    expect(backoffDelay(3, { ...policy, jitter: 'full' }, () => 0)).toBe(0);
    expect(backoffDelay(3, { ...policy, jitter: 'full' }, () => 7)).toBe(400);
  });
});

describe('classifyKafkaError', () => {
  test('a broker rejection that retrying cannot fix is permanent, also when kafkajs wrapped it after retries', () => {
    expect(classifyKafkaError(protocolError('MESSAGE_TOO_LARGE', false)).retriable).toBe(false);
    const wrapped = new KafkaJSNumberOfRetriesExceeded(protocolError('TOPIC_AUTHORIZATION_FAILED', false), {
      retryCount: 5,
      retryTime: 100,
    });
    expect(classifyKafkaError(wrapped)).toMatchObject({
      retriable: false,
      kafkaType: 'TOPIC_AUTHORIZATION_FAILED',
    });
  });

  test('leader moves, missing replicas, connection loss and unknown failures are retryable', () => {
    expect(classifyKafkaError(protocolError('NOT_LEADER_FOR_PARTITION', true)).retriable).toBe(true);
    expect(classifyKafkaError(protocolError('NOT_ENOUGH_REPLICAS', true)).retriable).toBe(true);
    expect(classifyKafkaError(new Error('socket hang up')).retriable).toBe(true);
  });

  test('a FerryError keeps its own retriable flag', () => {
    expect(classifyKafkaError(new FerryError('FERRY_PERMANENT_FAILURE', 'no')).retriable).toBe(false);
  });
});

describe('wire format', () => {
  const routing = { defaultTopic: 'default-topic', routes: { 'a.b': 'routed' } };

  test('the destination wins over the route, the route over the default topic', () => {
    const encode = (destination: string | null, type: string) =>
      encodeOutboxMessage(outboxMessage({ destination, type }), routing, 1_000);
    expect(encode('explicit', 'a.b')).toMatchObject({ ok: true, record: { topic: 'explicit' } });
    expect(encode(null, 'a.b')).toMatchObject({ ok: true, record: { topic: 'routed' } });
    expect(encode(null, 'x.y')).toMatchObject({ ok: true, record: { topic: 'default-topic' } });
  });

  test("an event header cannot forge ferry's headers, and absent optional headers are not sent", () => {
    const message = outboxMessage({
      headers: { [FERRY_HEADERS.messageId]: 'forged', [FERRY_HEADERS.tenantId]: 'forged' },
    });
    const encoded = encodeOutboxMessage(message, routing, 1_000);
    expect(encoded.ok && encoded.record.headers).toEqual({
      [FERRY_HEADERS.messageId]: message.id,
      [FERRY_HEADERS.eventType]: message.type,
    });
  });

  test('a record decodes to an inbox input with identity, tenant, type and headers', () => {
    const decoded = decodeRecord(
      't',
      0,
      {
        key: Buffer.from('k'),
        value: Buffer.from('{"x":1}'),
        offset: '7',
        timestamp: '0',
        attributes: 0,
        headers: {
          [FERRY_HEADERS.messageId]: Buffer.from('m-1'),
          [FERRY_HEADERS.tenantId]: 'acme',
          [FERRY_HEADERS.eventType]: 'e',
        },
      },
      { consumer: 'c', maxPayloadBytes: 100, identity: null },
    );
    expect(decoded).toEqual({
      ok: true,
      input: {
        consumer: 'c',
        messageId: 'm-1',
        tenantId: 'acme',
        type: 'e',
        payload: { x: 1 },
        headers: {
          [FERRY_HEADERS.messageId]: 'm-1',
          [FERRY_HEADERS.tenantId]: 'acme',
          [FERRY_HEADERS.eventType]: 'e',
        },
      },
    });
  });

  test('a record without identity is invalid unless an extractor gives one', () => {
    const message = {
      key: null,
      value: Buffer.from('{}'),
      offset: '3',
      timestamp: '0',
      attributes: 0,
      headers: {},
    };
    expect(
      decodeRecord('t', 2, message, { consumer: 'c', maxPayloadBytes: 100, identity: null }),
    ).toMatchObject({
      ok: false,
      reason: REJECT_REASONS.missingIdentity,
    });
    expect(
      decodeRecord('t', 2, message, {
        consumer: 'c',
        maxPayloadBytes: 100,
        identity: topicPartitionOffsetIdentity,
      }),
    ).toMatchObject({
      ok: true,
      input: { messageId: 't-2-3' },
    });
  });
});

describe('options', () => {
  test('a bad option fails resolution with a coded error naming it', () => {
    expect(() => resolveConnectionOptions({ brokers: [] })).toThrow(FerryConfigError);
    expect(() => resolveConnectionOptions({ brokers: ['no-port'], logger: silentLogger })).toThrow(
      /brokers\[0\]/,
    );
    const connection = testConnection();
    expect(() => resolveConsumerOptions({ connection, groupId: 'g', consumer: 'c' })).toThrow(/topics/);
    expect(() =>
      resolveConsumerOptions({ connection, topic: 't', groupId: 'g', consumer: 'c', maxAcceptBatch: 0 }),
    ).toThrow(/maxAcceptBatch/);
  });

  test('consumer defaults come from the DEFAULTS table and the dead-letter topic defaults to <topic>.dlq', () => {
    const resolved = resolveConsumerOptions({
      connection: testConnection(),
      topic: 'orders',
      groupId: 'g',
      consumer: 'c',
    });
    expect(resolved.maxAcceptBatch).toBe(DEFAULTS.consumer.maxAcceptBatch);
    expect(resolved.fromBeginning).toBe(true);
    expect(resolved.deadLetterTopic('orders')).toBe('orders.dlq');
  });
});

describe('KafkaPublisher.connect', () => {
  test('fails with a retriable FERRY_TRANSPORT_ERROR when no broker answers, and with FERRY_CLOSED after close()', async () => {
    const unreachable = testConnection({
      brokers: ['127.0.0.1:1'],
      connectionTimeoutMs: 200,
      kafkaConfig: { retry: { retries: 0 } },
    });
    const publisher = new KafkaPublisher(unreachable);
    await expect(publisher.connect()).rejects.toMatchObject({
      code: 'FERRY_TRANSPORT_ERROR',
      retriable: true,
    });
    await publisher.close();
    await expect(publisher.connect()).rejects.toMatchObject({ code: 'FERRY_CLOSED' });
  });
});
