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

describe('guardLogger and what a logger writes of an object', () => {
  // pino writes what JSON.stringify and its err serializer make of a field: a URL object's href,
  // any object's toJSON, an error's whole cause chain.
  it('a URL object in a field', () => {
    const { logger, text } = captured();
    logger.warn({ url: new URL('amqp://app:s3cret@broker:5672/vh') }, 'connect failed');
    expect(text()).toContain('connect failed');
    expect(text()).toContain('amqp://[redacted]@broker:5672/vh');
    expect(text()).not.toContain('s3cret');
  });

  it('an object whose toJSON gives the URL', () => {
    const { logger, text } = captured();
    const config = { toJSON: () => ({ url: 'postgresql://app:s3cret@db/x' }) };
    logger.warn({ config, at: new Date(0) }, 'pool failed');
    expect(text()).toContain('pool failed');
    expect(text()).toContain('1970-01-01T00:00:00.000Z');
    expect(text()).not.toContain('s3cret');
  });

  it('an error whose cause chain is more than four causes deep, and a cyclic one', () => {
    const { logger, text } = captured();
    let error = new Error('connect amqp://app:s3cret@broker failed');
    for (let i = 0; i < 8; i += 1) error = new Error(`wrapped ${i}`, { cause: error });
    logger.error({ err: error }, 'cycle failed');
    const a = new Error('a amqp://app:s3cret@h') as Error & { cause?: unknown };
    a.cause = new Error('b', { cause: a });
    logger.error({ err: a }, 'cyclic');
    expect(text()).toContain('cycle failed');
    expect(text()).toContain('cyclic');
    expect(text()).not.toContain('s3cret');
  });
});
