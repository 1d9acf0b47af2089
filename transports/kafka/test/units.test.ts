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
  resolvePublisherOptions,
  topicPartitionOffsetIdentity,
  type ConsumerOptions,
} from '../src';
import { describeCauses, describeError } from '../src/errors';
import { MultipleErrors, NetworkError, ProtocolError, TimeoutError } from '@platformatic/kafka';
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
    const wrapped = new KafkaJSNumberOfRetriesExceeded(protocolError('POLICY_VIOLATION', false), {
      retryCount: 5,
      retryTime: 100,
    });
    expect(classifyKafkaError(wrapped)).toMatchObject({
      retriable: false,
      kafkaType: 'POLICY_VIOLATION',
    });
  });

  test('leader moves, missing replicas, connection loss and unknown failures are retryable', () => {
    expect(classifyKafkaError(protocolError('NOT_LEADER_FOR_PARTITION', true)).retriable).toBe(true);
    expect(classifyKafkaError(protocolError('NOT_ENOUGH_REPLICAS', true)).retriable).toBe(true);
    expect(classifyKafkaError(new Error('socket hang up')).retriable).toBe(true);
  });

  test('@platformatic/kafka: a protocol error nested in MultipleErrors is classified by its apiId and named', () => {
    const tooLarge = new MultipleErrors('Producing messages failed.', [
      new MultipleErrors('produce failed 3 times.', [new ProtocolError('MESSAGE_TOO_LARGE')]),
    ]);
    expect(classifyKafkaError(tooLarge)).toMatchObject({ retriable: false, kafkaType: 'MESSAGE_TOO_LARGE' });
    expect(describeError(tooLarge)).toContain('Producing messages failed.');
    expect(describeError(tooLarge)).toContain(new ProtocolError('MESSAGE_TOO_LARGE').message);
    const leaderMoved = new MultipleErrors('Producing messages failed.', [
      new ProtocolError('NOT_LEADER_OR_FOLLOWER'),
    ]);
    expect(classifyKafkaError(leaderMoved)).toMatchObject({
      retriable: true,
      kafkaType: 'NOT_LEADER_OR_FOLLOWER',
    });
  });

  test('connection failures are unavailable; protocol errors of a message are not', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    const connectionError = Object.assign(new Error('Connection error'), { name: 'KafkaJSConnectionError' });
    const exhausted = new KafkaJSNumberOfRetriesExceeded(connectionError, { retryCount: 1, retryTime: 10 });
    expect(classifyKafkaError(refused).unavailable).toBe(true);
    expect(classifyKafkaError(exhausted).unavailable).toBe(true);
    expect(classifyKafkaError(protocolError('BROKER_NOT_AVAILABLE', true)).unavailable).toBe(true);
    // A leader that stays missing through kafkajs's retries is the cluster's fault, not the message's (review11).
    expect(classifyKafkaError(protocolError('NOT_LEADER_FOR_PARTITION', true)).unavailable).toBe(true);
    expect(classifyKafkaError(protocolError('MESSAGE_TOO_LARGE', false)).unavailable).toBe(false);
  });

  test('@platformatic/kafka: connection-level failures nested in MultipleErrors are unavailable', () => {
    // The shapes a Producer's send rejects with (captured from @platformatic/kafka 1.35).
    const refused = new MultipleErrors('initProducerId failed 3 times.', [
      new MultipleErrors('Cannot connect to any broker.', [
        new NetworkError('Connection to 127.0.0.1:1 failed.', {
          cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
        }),
      ]),
    ]);
    const dropped = new MultipleErrors('initProducerId failed 3 times.', [
      new MultipleErrors('listApis failed 3 times.', [new NetworkError('Connection closed')]),
    ]);
    const timedOut = new MultipleErrors('Producing messages failed.', [
      new TimeoutError('Request timed out'),
    ]);
    const brokerGone = new MultipleErrors('Producing messages failed.', [
      new ProtocolError('BROKER_NOT_AVAILABLE'),
    ]);
    const networkException = new MultipleErrors('Producing messages failed.', [
      new ProtocolError('NETWORK_EXCEPTION'),
    ]);
    for (const error of [refused, dropped, timedOut, brokerGone, networkException]) {
      expect(classifyKafkaError(error)).toMatchObject({ unavailable: true, retriable: true });
    }
    expect(classifyKafkaError(new NetworkError('Connection closed')).unavailable).toBe(true);
    expect(describeError(refused)).toContain('Connection to 127.0.0.1:1 failed.');
  });

  test("@platformatic/kafka: a message's own protocol errors are not unavailable; a leader move is", () => {
    const tooLarge = new MultipleErrors('Producing messages failed.', [
      new ProtocolError('MESSAGE_TOO_LARGE'),
    ]);
    // A leader election (NOT_LEADER_OR_FOLLOWER) is the cluster's, not the message's: unavailable
    // (the review's rule, tested above); a corrupt record is the message's and may be retried.
    const corrupt = new MultipleErrors('Producing messages failed.', [new ProtocolError('CORRUPT_MESSAGE')]);
    expect(classifyKafkaError(tooLarge)).toMatchObject({ unavailable: false, retriable: false });
    expect(classifyKafkaError(corrupt)).toMatchObject({
      unavailable: false,
      retriable: true,
      kafkaType: 'CORRUPT_MESSAGE',
    });
  });

  test('a FerryError keeps its own retriable flag', () => {
    expect(classifyKafkaError(new FerryError('FERRY_PERMANENT_FAILURE', 'no')).retriable).toBe(false);
  });
});

describe('describeError', () => {
  test('@platformatic/kafka: names the cause under the first nested error (a SASL refusal under a connection failure)', () => {
    const refusal = new Error('SASL mechanism plain not supported.');
    const connection = new NetworkError('Connection to 127.0.0.1:9092 failed.', { cause: refusal });
    const failure = new MultipleErrors('listApis failed 6 times.', [
      new MultipleErrors('Cannot connect to any broker.', [connection]),
    ]);
    expect(describeError(failure)).toBe(
      'listApis failed 6 times. (Connection to 127.0.0.1:9092 failed. <- SASL mechanism plain not supported.)',
    );
  });
});

describe('describeCauses', () => {
  test('names the code and every cause down the chain, without repeating a cause the message already quotes', () => {
    const root = new Error('connect ECONNREFUSED 127.0.0.1:5432');
    const wrapped = new FerryError('FERRY_DATABASE_UNAVAILABLE', 'inbox acceptance failed', { cause: root });
    expect(describeCauses(wrapped)).toBe(
      'FERRY_DATABASE_UNAVAILABLE: inbox acceptance failed <- connect ECONNREFUSED 127.0.0.1:5432',
    );
    const quoted = new FerryError('FERRY_TRANSPORT_ERROR', `send failed: ${root.message}`, { cause: root });
    expect(describeCauses(quoted)).toBe(
      'FERRY_TRANSPORT_ERROR: send failed: connect ECONNREFUSED 127.0.0.1:5432',
    );
    expect(describeCauses('plain')).toBe('plain');
  });
});

describe('wire format', () => {
  const routing = { defaultDestination: 'default-topic', routes: { 'a.b': 'routed' } };

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
        system: 'kafka',
        payload: { x: 1 },
        headers: {
          [FERRY_HEADERS.messageId]: 'm-1',
          [FERRY_HEADERS.tenantId]: 'acme',
          [FERRY_HEADERS.eventType]: 'e',
        },
      },
    });
  });

  test("ferry's identity is read apart from the headers passed on: a message id with NUL stays the identity (the inbox refuses it), never the extractor's", () => {
    const decoded = decodeRecord(
      't',
      1,
      {
        key: null,
        value: Buffer.from('{}'),
        offset: '4',
        timestamp: '0',
        headers: {
          [FERRY_HEADERS.messageId]: Buffer.from('m\u0000'),
          [FERRY_HEADERS.eventType]: '',
          'x-bin': Buffer.from([0x00]),
          'x-app': Buffer.from('kept'),
        },
      },
      { consumer: 'c', maxPayloadBytes: 100, identity: topicPartitionOffsetIdentity },
    );
    expect(decoded).toMatchObject({
      ok: true,
      input: {
        messageId: 'm\u0000',
        type: null,
        headers: { [FERRY_HEADERS.eventType]: '', 'x-app': 'kept' },
      },
    });
    expect(decoded.ok && decoded.input.headers).toEqual({ [FERRY_HEADERS.eventType]: '', 'x-app': 'kept' });
  });

  test("a ferry identity, tenant or type header whose bytes are not UTF-8 is invalid_text naming it, never the extractor's id in its place; UTF-8 bytes decode", () => {
    const notUtf8 = Buffer.from([0xff, 0x61]);
    const record = (headers: Record<string, Buffer | string>) =>
      decodeRecord(
        't',
        0,
        { key: null, value: Buffer.from('{}'), offset: '5', timestamp: '0', headers },
        { consumer: 'c', maxPayloadBytes: 100, identity: topicPartitionOffsetIdentity },
      );
    expect(record({ [FERRY_HEADERS.messageId]: notUtf8 })).toEqual({
      ok: false,
      reason: REJECT_REASONS.invalidText,
      detail: `the ${FERRY_HEADERS.messageId} header is bytes that are not valid UTF-8`,
      messageId: null,
    });
    expect(record({ [FERRY_HEADERS.messageId]: 'm', [FERRY_HEADERS.tenantId]: notUtf8 })).toEqual({
      ok: false,
      reason: REJECT_REASONS.invalidText,
      detail: `the ${FERRY_HEADERS.tenantId} header is bytes that are not valid UTF-8`,
      messageId: 'm',
    });
    expect(record({ [FERRY_HEADERS.messageId]: 'm', [FERRY_HEADERS.eventType]: notUtf8 })).toMatchObject({
      ok: false,
      reason: REJECT_REASONS.invalidText,
      detail: expect.stringContaining(FERRY_HEADERS.eventType),
    });
    expect(
      record({
        [FERRY_HEADERS.messageId]: Buffer.from('m-é'),
        [FERRY_HEADERS.tenantId]: Buffer.from('zürich'),
        [FERRY_HEADERS.eventType]: Buffer.from('order.placed'),
      }),
    ).toMatchObject({ ok: true, input: { messageId: 'm-é', tenantId: 'zürich', type: 'order.placed' } });
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
    const consumer = (extra: Partial<ConsumerOptions>) => () =>
      resolveConsumerOptions({ connection, topic: 't', groupId: 'g', consumer: 'c', ...extra });
    expect(consumer({ maxBatchSize: 0 })).toThrow(/maxBatchSize/);
    expect(consumer({ tombstones: 'drop' as unknown as 'skip' })).toThrow(/tombstones/);
    expect(consumer({ tenant: { fixed: '' } })).toThrow(/tenant\.fixed/);
    // Review finding (failed first): a fixed tenant acceptance refuses (too long, a NUL) attached,
    // and every message of the topic was then dead-lettered as invalid.
    expect(consumer({ tenant: { fixed: 'x'.repeat(256) } })).toThrow(/tenant\.fixed: is 256 characters/);
    expect(consumer({ tenant: { fixed: 'acme\u0000' } })).toThrow(/tenant\.fixed: contains a NUL/);
    expect(consumer({ deadLetter: { topik: 'x' } as never })).toThrow(
      /deadLetter\.topik: is not a known option/,
    );
    expect(() => resolvePublisherOptions({ defaultTopic: 'x' } as never)).toThrow(
      /defaultTopic: is not a known option/,
    );
  });

  test('consumer defaults come from the DEFAULTS table and the dead-letter topic defaults to <topic>.dlq', () => {
    const resolved = resolveConsumerOptions({
      connection: testConnection(),
      topic: 'orders',
      groupId: 'g',
      consumer: 'c',
    });
    expect(resolved.maxBatchSize).toBe(DEFAULTS.consumer.maxBatchSize);
    expect(resolved.fromBeginning).toBe(true);
    expect(resolved.tombstones).toBe('dead-letter');
    expect(resolved.tenant).toBe('header');
    expect(resolved.deadLetterTopic('orders')).toBe('orders.dlq');
    expect(resolved.deadLetterSendRetries).toBe(DEFAULTS.consumer.deadLetter.sendRetries);
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
