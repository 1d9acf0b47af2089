import { writtenLog } from '../../../../test-support/writtenLog';
import { guardLogger } from './logger';

/** Every line pino writes through the guard, as written. */
function captured(): { logger: ReturnType<typeof guardLogger>; text: () => string } {
  const { logger, text } = writtenLog();
  return { logger: guardLogger(logger), text };
}

describe('guardLogger and credentials in URLs', () => {
  it('writes no user:password@ of a URL, in the message, a field, an error or its cause', () => {
    const { logger, text } = captured();
    // Node's URL parser keeps the whole input on the error it throws.
    const invalid = Object.assign(new TypeError('Invalid URL'), {
      code: 'ERR_INVALID_URL',
      input: 'amqp://app:s3cret@broker:notaport',
    });
    logger.warn({ err: invalid, delay: 5 }, 'connect failed');
    logger.error(
      { err: new Error('wrapped', { cause: new Error('at postgresql://app:s3cret@db/x') }) },
      'cycle failed',
    );
    logger.info({ url: 'amqps://app:s3cret@broker/vh', nested: { url: 'http://k:s3cret@h' } }, 'up');
    logger.warn('connecting to amqp://app:s3cret@broker');
    const written = text();
    expect(written).not.toContain('s3cret');
    expect(written).toContain('amqp://[redacted]@broker:notaport');
    expect(written).toContain('postgresql://[redacted]@db/x');
    expect(written).toContain('amqps://[redacted]@broker/vh');
    expect(written).toContain('connecting to amqp://[redacted]@broker');
    expect(written).toContain('"delay":5');
  });

  it('passes a line without credentials on as it is', () => {
    const seen: unknown[][] = [];
    const at = (...line: unknown[]): void => void seen.push(line);
    const logger = guardLogger({ debug: at, info: at, warn: at, error: at });
    const err = new Error('connect ECONNREFUSED 127.0.0.1:5672');
    const fields = { err, url: 'amqp://127.0.0.1' };
    logger.warn(fields, 'connect failed');
    expect(seen).toEqual([[fields, 'connect failed']]);
    expect((seen[0]?.[0] as { err: unknown }).err).toBe(err);
  });
});
