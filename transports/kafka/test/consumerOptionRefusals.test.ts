/**
 * Consumer options refused at attach (FERRY_CONFIG_INVALID naming the option) rather than run:
 * a dead-letter topic that is a consumed topic (records would loop for ever), a maxWaitTimeMs
 * below 100 (the fetch loop would spin), partitionsConsumedConcurrently on @platformatic/kafka
 * (it would be ignored); and how a record's key and header names are read (no lossy text, no
 * case variant of a reserved name). Pure logic: no broker.
 */
import { FERRY_HEADERS, FerryConfigError } from '@ferry/core';
import { resolveConsumerOptions, type ConsumerOptions } from '../src';
import { operatorRefusal } from '../src/errors';
import { decodeHeaders, decodeRecord } from '../src/wire';
import { kafkaClient } from './clients';
import { testConnection } from './support';

const connection = testConnection();
const resolve = (extra: Partial<ConsumerOptions>) =>
  resolveConsumerOptions({ connection, topic: 'orders', groupId: 'g', consumer: 'c', ...extra });
const refusal = (extra: Partial<ConsumerOptions>): unknown => {
  try {
    resolve(extra);
    return null;
  } catch (error) {
    return error;
  }
};

describe('deadLetter.topic', () => {
  test('a consumed topic is refused: by name, by the default suffix, or as a function answer', () => {
    expect(refusal({ deadLetter: { topic: 'orders' } })).toBeInstanceOf(FerryConfigError);
    expect(refusal({ topics: ['orders', 'errors'], deadLetter: { topic: 'errors' } })).toMatchObject({
      code: 'FERRY_CONFIG_INVALID',
      option: 'deadLetter.topic',
      message: expect.stringContaining('errors is a consumed topic'),
    });
    // The default `<topic>.dlq` of one consumed topic is another consumed topic.
    expect(refusal({ topics: ['orders', 'orders.dlq'] })).toMatchObject({ option: 'deadLetter.topic' });
    const routed = resolve({ topics: ['orders', 'refunds'], deadLetter: { topic: () => 'refunds' } });
    expect(() => routed.deadLetterTopic('orders')).toThrow(FerryConfigError);
    expect(resolve({ deadLetter: { topic: 'orders.errors' } }).deadLetterTopic('orders')).toBe(
      'orders.errors',
    );
  });
});

test('maxWaitTimeMs below 100 is refused (0 would spin the fetch loop)', () => {
  expect(refusal({ maxWaitTimeMs: 0 })).toMatchObject({ option: 'maxWaitTimeMs' });
  expect(refusal({ maxWaitTimeMs: 99 })).toMatchObject({ option: 'maxWaitTimeMs' });
  expect(resolve({ maxWaitTimeMs: 100 }).maxWaitTimeMs).toBe(100);
});

test('partitionsConsumedConcurrently above 1 runs on kafkajs and is refused on @platformatic/kafka', () => {
  if (kafkaClient() === 'kafkajs') {
    expect(resolve({ partitionsConsumedConcurrently: 3 }).partitionsConsumedConcurrently).toBe(3);
  } else {
    expect(refusal({ partitionsConsumedConcurrently: 3 })).toMatchObject({
      option: 'partitionsConsumedConcurrently',
      message: expect.stringContaining('@platformatic/kafka'),
    });
  }
  expect(resolve({ partitionsConsumedConcurrently: 1 }).partitionsConsumedConcurrently).toBe(1);
});

test('refusals only an operator can fix are told apart from failures a retry may fix', () => {
  const nested = { message: 'join failed', errors: [{ apiId: 'INVALID_SESSION_TIMEOUT' }] };
  expect(operatorRefusal(nested)).toMatch(/^INVALID_SESSION_TIMEOUT: sessionTimeoutMs/);
  expect(operatorRefusal({ cause: { type: 'TOPIC_AUTHORIZATION_FAILED' } })).toMatch(/TOPIC_AUTHORIZATION/);
  expect(operatorRefusal({ type: 'NOT_COORDINATOR' })).toBeNull();
});

describe('record keys and header names', () => {
  const context = { consumer: 'c', maxPayloadBytes: 1_000, identity: null };
  const record = (key: Buffer | null) => ({
    key,
    value: Buffer.from('{}'),
    offset: '7',
    timestamp: '0',
    headers: { [FERRY_HEADERS.messageId]: 'm' },
  });

  test('a key that is not UTF-8 reaches no identity or tenant function: invalid_text', () => {
    const seen: (string | null)[] = [];
    const identity = (input: { key: string | null }) => {
      seen.push(input.key);
      return 'x';
    };
    const noHeader = { ...record(Buffer.from([0xff, 0x61])), headers: {} };
    expect(decodeRecord('t', 0, noHeader, { ...context, identity })).toMatchObject({
      ok: false,
      reason: 'invalid_text',
      detail: expect.stringContaining('record key'),
    });
    const tenant = (input: { key: string | null }) => (seen.push(input.key), 'a');
    expect(decodeRecord('t', 0, record(Buffer.from([0xfe, 0x61])), { ...context, tenant })).toMatchObject({
      ok: false,
      reason: 'invalid_text',
    });
    expect(seen).toEqual([]);
    // Read by no function: accepted as usual.
    expect(decodeRecord('t', 0, record(Buffer.from([0xff])), context)).toMatchObject({ ok: true });
    // A UTF-8 key is given as its text.
    expect(decodeRecord('t', 0, record(Buffer.from('é-1')), { ...context, tenant })).toMatchObject({
      ok: true,
      input: { tenantId: 'a' },
    });
    expect(seen).toEqual(['é-1']);
  });

  // A trace header in another case is W3C's (its names are case-insensitive; Go writes
  // `Traceparent`): stored under ferry's lower-case name since review 93, as an exact one is.
  test('a case variant of an x-ferry-* header name never reaches the inbox; the envelope names do; a trace header is stored lower-case', () => {
    expect(
      decodeHeaders({
        'X-Ferry-Transport-Attempts': '3',
        'X-FERRY-MESSAGE-ID': 'forged',
        TraceParent: 'forged',
        [FERRY_HEADERS.messageId]: 'm',
        plain: 'kept',
      }),
    ).toEqual({ [FERRY_HEADERS.messageId]: 'm', plain: 'kept', [FERRY_HEADERS.traceparent]: 'forged' });
  });
});
