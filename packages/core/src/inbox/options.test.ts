import { FerryConfigError } from '../errors';
import { INBOX_WORKER_DEFAULTS, resolveInboxOptions } from './options';

const handlers = { a: async () => undefined, b: async () => undefined };

describe('resolveInboxOptions', () => {
  it('fills every default from the table', () => {
    const resolved = resolveInboxOptions({ handlers });
    expect(resolved.worker).toEqual({ ...INBOX_WORKER_DEFAULTS, consumers: ['a', 'b'] });
    expect(resolved).toMatchObject({
      maxPayloadBytes: 262_144,
      maxPendingMessages: null,
      global: 'reject',
      privilegedAdmin: false,
    });
  });

  it.each([
    [{ worker: { concurrency: 101 } }, 'worker.concurrency'],
    [{ worker: { concurrency: 0 } }, 'worker.concurrency'],
    [{ worker: { leaseMs: 1000, heartbeatIntervalMs: 500 } }, 'worker.heartbeatIntervalMs'],
    [{ worker: { retryBaseMs: 10, retryMaxMs: 5 } }, 'worker.retryMaxMs'],
    [{ worker: { maxAttempts: 1.5 } }, 'worker.maxAttempts'],
    [{ worker: { consumers: ['missing'] } }, 'worker.consumers'],
    [{ worker: { pollInterval: 5 } }, 'worker.pollInterval'],
    [{ worker: { prefetch: 1001 } }, 'worker.prefetch'],
    [{ worker: { prefetch: -1 } }, 'worker.prefetch'],
    [{ worker: { listenUrl: '' } }, 'worker.listenUrl'],
    [{ worker: { listenUrl: 5 } }, 'worker.listenUrl'],
    [{ maxPayloadBytes: 0 }, 'maxPayloadBytes'],
    [{ maxPendingMessages: -1 }, 'maxPendingMessages'],
    [{ global: 'everyone' }, 'global'],
    [{ handlers: { x: 42 } }, 'handlers.x'],
    // Every field of a handler, and the handlers themselves (review 83).
    [{ handlers: { x: { parse: 'v2', handle: handlers.a } } }, 'handlers.x.parse'],
    [{ handlers: { x: { parse: {}, handle: handlers.a } } }, 'handlers.x.parse'],
    [{ handlers: { x: { parse: () => 1 } } }, 'handlers.x.handle'],
    [{ handlers: { x: { handle: 'run' } } }, 'handlers.x.handle'],
    [{ handlers: { x: { parser: () => 1, handle: handlers.a } } }, 'handlers.x.parser'],
    [{ handlers: { x: [handlers.a] } }, 'handlers.x'],
    [{ handlers: [handlers.a] }, 'handlers'],
    [{ handlers: new Map([['x', handlers.a]]) }, 'handlers'],
    // eslint-disable-next-line no-sparse-arrays -- the hole is the case
    [{ worker: { consumers: ['a', , 'b'] } }, 'worker.consumers'],
    // Names acceptance refuses (its own check): a handler no message can ever reach.
    [{ handlers: { ['c'.repeat(201)]: handlers.a } }, `handlers.${'c'.repeat(201)}`],
    [{ handlers: { 'nul\u0000name': handlers.a } }, 'handlers.nul\u0000name'],
    // null is a value, not "left out" (review 87): it silently became the default (maxAttempts 8).
    [{ worker: null }, 'worker'],
    [{ worker: { maxAttempts: null } }, 'worker.maxAttempts'],
    [{ worker: { concurrency: null } }, 'worker.concurrency'],
    [{ worker: { leaseMs: null } }, 'worker.leaseMs'],
    [{ worker: { enabled: null } }, 'worker.enabled'],
    [{ maxPayloadBytes: null }, 'maxPayloadBytes'],
    [{ statementTimeoutMs: null }, 'statementTimeoutMs'],
    [{ global: null }, 'global'],
    [{ privilegedAdmin: null }, 'privilegedAdmin'],
  ])('rejects %j naming %s', (input, option) => {
    const error = (() => {
      try {
        resolveInboxOptions({ handlers, ...(input as object) });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(FerryConfigError);
    expect(error).toMatchObject({ code: 'FERRY_CONFIG_INVALID', option });
  });

  it('accepts a handler object with parse, and a class instance with its own fields', () => {
    class Orders {
      constructor(readonly repository: object) {}
      parse(payload: unknown) {
        return payload;
      }
      async handle() {}
    }
    const resolved = resolveInboxOptions({
      handlers: { a: { parse: (p) => p, handle: handlers.a }, b: new Orders({}), c: { handle: handlers.a } },
    });
    expect(Object.keys(resolved.handlers)).toEqual(['a', 'b', 'c']);
  });

  it('accepts a heartbeat just under half the lease and the concurrency upper bound', () => {
    expect(
      resolveInboxOptions({ handlers, worker: { leaseMs: 1000, heartbeatIntervalMs: 499, concurrency: 100 } })
        .worker,
    ).toMatchObject({
      heartbeatIntervalMs: 499,
      concurrency: 100,
    });
  });
});
