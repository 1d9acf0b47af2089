/**
 * createRelay refuses `retry.maxRetries` (fixed per event at emit) however it is given, except in
 * options resolveOutboxOptions returned (a wrapper resolving one configuration for its emitter and
 * relay); the deprecated `stuckThreshold` is named as written in every refusal it causes
 * (review82-relayRetryOptions).
 */
import { createRelay, FerryConfigError, resolveOutboxOptions, type OutboxOptions } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { silent } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

function refusedOption(options: OutboxOptions | ReturnType<typeof resolveOutboxOptions>): string | null {
  try {
    const relay = createRelay({ db: t.db, publisher: new InMemoryPublisher(), logger: silent, options });
    void relay.close();
    return null;
  } catch (error) {
    if (!(error instanceof FerryConfigError)) throw error;
    return `${error.option}: ${String(error.details.reason)}`;
  }
}

describe('createRelay and retry.maxRetries', () => {
  it('is refused even at its default value, saying where it belongs', () => {
    expect(refusedOption({ retry: { maxRetries: 5, initialDelay: 10 } })).toMatch(
      /^retry\.maxRetries: is not a relay option: max retries are fixed per event at emit, set them on createEmitter\(\{ retry: \{ maxRetries \} \}\)/,
    );
  });

  it('the other retry options are taken', () => {
    expect(refusedOption({ retry: { initialDelay: 10, backoff: 'fixed', maxDelay: 100 } })).toBeNull();
  });

  it('options resolveOutboxOptions returned (maxRetries included) are taken', () => {
    expect(refusedOption(resolveOutboxOptions({ retry: { maxRetries: 3 } }))).toBeNull();
  });
});

describe('the deprecated stuckThreshold', () => {
  it('is named in a refusal of its relation with lease.heartbeatInterval', () => {
    expect(refusedOption({ stuckThreshold: 1_000, lease: { heartbeatInterval: 5_000 } })).toMatch(
      /^lease\.heartbeatInterval: .*half of stuckThreshold \(1000\)$/,
    );
  });

  it('of the wrong type is refused naming it', () => {
    expect(refusedOption({ stuckThreshold: '60s' as unknown as number })).toMatch(
      /^stuckThreshold: must be an integer/,
    );
  });
});
