import { describe, expect, it } from '@jest/globals';
import { transportError } from './errors';

describe('transportError', () => {
  it('shows a URL of its message and of its cause without the user and password', () => {
    const error = transportError(
      'SendMessageBatch to dead-letter queue http://AKID:SeCrEt@host:9324/000000000000/dead failed',
      new Error('connect ECONNREFUSED http://u:SeCrEt2@host:9324'),
    );
    expect(error.code).toBe('FERRY_TRANSPORT_ERROR');
    expect(error.message).toContain('http://[redacted]@host:9324/000000000000/dead');
    expect(error.message).not.toMatch(/SeCrEt/);
  });
});
