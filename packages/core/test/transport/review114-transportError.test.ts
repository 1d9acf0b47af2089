/** transportError's message: the cause described after it, or the message alone (review 114). */
import { FerryError } from '@ferry/core';
import { transportError } from '@ferry/core/transport';

describe('transportError', () => {
  it('without a cause is the message alone, no cause attached', () => {
    const error = transportError('queue orders is closed by the broker');
    expect(error).toBeInstanceOf(FerryError);
    expect(error.code).toBe('FERRY_TRANSPORT_ERROR');
    expect(error.message).toBe('queue orders is closed by the broker');
    expect('cause' in error).toBe(false);
  });

  it("with a cause describes it after the message, without a URL's credentials", () => {
    const cause = new Error('connect ECONNREFUSED amqp://app:s3cret@mq:5672');
    const error = transportError('publish to amqp://app:s3cret@mq:5672 failed', cause);
    expect(error.message).not.toContain('s3cret');
    expect(error.message).toMatch(/^publish to amqp:\/\/\[redacted\]@mq:5672 failed: connect ECONNREFUSED/);
    expect(error.cause).toBe(cause);
  });

  it('with a thrown value that is no Error describes its string form', () => {
    expect(transportError('ack failed', 'channel closed').message).toBe('ack failed: channel closed');
  });
});
