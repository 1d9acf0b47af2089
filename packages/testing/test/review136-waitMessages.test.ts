/**
 * Review 136: the wait helpers' timeout, whatever the probe last threw. waitUntil counts any
 * thrown value as "not yet" and names the last one in its WaitTimeoutError; waitForInboxRecord
 * names the last retriable error of get(id). A value that cannot be described as the helper did
 * (a revoked Proxy, an error whose `message` getter throws, an object with circular references
 * and no prototype) made building the timeout's message throw: the wait rejected with that
 * TypeError, not its FERRY_TIMEOUT naming what it waited for.
 */
import { InboxRecordWaitTimeoutError, WaitTimeoutError, waitForInboxRecord, waitUntil } from '@ferry/testing';

function revoked(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

function unreadableMessage(): Error {
  const error = new Error('x');
  Object.defineProperty(error, 'message', {
    get() {
      throw new Error('message unreadable');
    },
  });
  return error;
}

function circularWithoutPrototype(): object {
  const value = Object.create(null) as Record<string, unknown>;
  value.self = value;
  return value;
}

const hostile: [string, () => unknown][] = [
  ['a revoked Proxy', revoked],
  ['an Error whose message getter throws', unreadableMessage],
  ['a circular object without a prototype', circularWithoutPrototype],
];

describe.each(hostile)('the probe last threw %s', (_name, thrown) => {
  it('waitUntil rejects with WaitTimeoutError naming what it waited for', async () => {
    const outcome = await waitUntil(
      'the order projected',
      () => {
        throw thrown();
      },
      { timeoutMs: 50, intervalMs: 10 },
    ).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(WaitTimeoutError);
    expect((outcome as WaitTimeoutError).message).toContain('waiting for the order projected');
  });

  it('waitForInboxRecord, the error retriable, rejects with InboxRecordWaitTimeoutError naming the record', async () => {
    const scope = {
      get: async () => {
        const error = thrown() as object;
        // Retriable by shape, as waitForInboxRecord reads it (a Proxy target takes the property).
        try {
          Object.defineProperty(error, 'retriable', { value: true });
        } catch {
          throw {
            retriable: true,
            code: 'FERRY_DATABASE_UNAVAILABLE',
            get message(): string {
              throw new Error('unreadable');
            },
          };
        }
        throw error;
      },
    };
    const outcome = await waitForInboxRecord(scope as never, 'r-1', { timeoutMs: 50, intervalMs: 10 }).catch(
      (error: unknown) => error,
    );
    expect(outcome).toBeInstanceOf(InboxRecordWaitTimeoutError);
    expect((outcome as Error).message).toContain('record r-1 did not reach COMPLETED');
  });
});
