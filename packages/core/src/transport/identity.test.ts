import { deadLetterIdentity, extractIdentity, hasFerryMessageId } from './identity';

/**
 * An application's extractor may be `async` by mistake: its answer is a Promise, which costs the
 * message its identity. When that Promise rejects, nothing may leave it unhandled: under Node's
 * default (--unhandled-rejections=throw) one unhandled rejection ends the consumer's process.
 */
describe('extractIdentity', () => {
  it('answers no identity for an async extractor that rejects, leaving no unhandled rejection', async () => {
    const rejecting = (async () => {
      throw new Error('lookup failed');
    }) as unknown as (message: object) => string;
    expect(extractIdentity(rejecting, {})).toEqual({
      ok: false,
      detail: expect.stringContaining('a Promise'),
    });
    // Jest fails the test on an unhandled rejection, reported once the microtasks have drained.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
  });
});

describe('deadLetterIdentity', () => {
  it('is the identity the consumer used when the message had no ferry header of its own', () => {
    expect(deadLetterIdentity('sqs-message-id', false)).toBe('sqs-message-id');
    expect(deadLetterIdentity('sqs-message-id', true)).toBeNull();
    expect(deadLetterIdentity(null, false)).toBeNull();
  });

  it('is never an id acceptance refuses', () => {
    expect(deadLetterIdentity('ferry:replay-1', false)).toBeNull();
    expect(deadLetterIdentity('a\nb', false)).toBeNull();
    expect(deadLetterIdentity('   ', false)).toBeNull();
    // Over acceptance's 255 characters (a megabyte did not fit RabbitMQ's header frame: the copy
    // failed and the delivery was never settled), a NUL, an unpaired surrogate.
    expect(deadLetterIdentity('x'.repeat(256), false)).toBeNull();
    expect(deadLetterIdentity('x'.repeat(255), false)).toBe('x'.repeat(255));
    expect(deadLetterIdentity('a\u0000b', false)).toBeNull();
    expect(deadLetterIdentity('a\ud800b', false)).toBeNull();
  });
});

describe('hasFerryMessageId', () => {
  it('is false for an absent or empty header, which the consumer reads as none (review 87)', () => {
    for (const none of [
      undefined,
      null,
      '',
      Buffer.alloc(0),
      new Uint8Array(0),
      [],
      ['', ''],
      [null, Buffer.alloc(0)],
    ]) {
      expect(hasFerryMessageId(none)).toBe(false);
    }
    // Kafka's repeated values with one that names something (ambiguous ones are copied as they are).
    for (const some of ['m-1', ' ', Buffer.from('m'), ['m-1'], ['', 'm-1'], ['m-1', ''], 0, {}]) {
      expect(hasFerryMessageId(some)).toBe(true);
    }
  });
});
