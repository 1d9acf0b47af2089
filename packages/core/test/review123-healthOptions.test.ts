/**
 * Review 123: createHealth's loop sources and transport names were not checked as its transports
 * entries are (review 111).
 *
 * - Two transports of one name: readiness and details answered two checks named alike
 *   (`transport rabbitmq` up, `transport rabbitmq` down), so an operator could not tell which
 *   broker connection was down. Refused naming the second entry's name.
 * - A `relay` / `inbox` that is no loop source (a string, a factory, the NestJS InboxService in
 *   place of its source, a promise): liveness answered `starting`, then, after maxCycleAgeMs, down
 *   for ever: an orchestrator restarted a healthy process in a loop for a configuration mistake.
 *   A `lastCycleAt` that is no Date made liveness() reject (TypeError) instead of answering. Refused
 *   at createHealth with FERRY_CONFIG_INVALID naming the option.
 */
import { createHealth, FerryConfigError, type HealthOptions } from '@ferry/core';
import { refusingExecutor } from '../../../test-support/executors';

/** The options are refused before any statement: this database answers none. */
const db = refusingExecutor;
const check = async () => undefined;

function refusal(options: Partial<HealthOptions>): unknown {
  try {
    createHealth({ db, checkSchema: false, ...options } as HealthOptions);
  } catch (error) {
    return error;
  }
  return 'accepted';
}

describe('createHealth options (review 123)', () => {
  it('refuses two transports of one name, naming the second', () => {
    const error = refusal({
      transports: [
        { name: 'rabbitmq', check },
        { name: 'kafka', check },
        { name: 'rabbitmq', check },
      ],
    });
    expect(error).toBeInstanceOf(FerryConfigError);
    expect(error).toMatchObject({ code: 'FERRY_CONFIG_INVALID', option: 'transports[2].name' });
    expect((error as Error).message).toMatch(/transports\[0\]/);
  });

  it.each([
    ['relay', 'a string', 'relay', 'relay'],
    ['relay', 'a function (the factory, not its relay)', () => ({ lastCycleAt: null }), 'relay'],
    ['relay', 'null', null, 'relay'],
    ['relay', 'a promise', Promise.resolve({ lastCycleAt: null }), 'relay.lastCycleAt'],
    [
      'inbox',
      'an object without lastCycleAt (a service, not its source)',
      { state: 'running' },
      'inbox.lastCycleAt',
    ],
    ['inbox', 'a lastCycleAt that is a number', { lastCycleAt: 1_765_000_000_000 }, 'inbox.lastCycleAt'],
    ['inbox', 'a state that is no string', { lastCycleAt: null, state: 3 }, 'inbox.state'],
  ])('refuses %s: %s', (key, _what, source, option) => {
    const error = refusal({ [key]: source });
    expect(error).toBeInstanceOf(FerryConfigError);
    expect(error).toMatchObject({ code: 'FERRY_CONFIG_INVALID', option });
  });

  it('takes loop sources of getters (a class, the NestJS adapter) and answers liveness', async () => {
    class Loop {
      get lastCycleAt(): Date | null {
        return new Date();
      }
      get state(): string {
        return 'running';
      }
    }
    const health = createHealth({ db, checkSchema: false, relay: new Loop(), inbox: { lastCycleAt: null } });
    expect(await health.liveness()).toMatchObject({
      status: 'up',
      checks: [{ name: 'relay' }, { name: 'inbox worker', detail: 'starting' }],
    });
  });
});

describe('a transport check that returns no promise (review 123)', () => {
  it('is down with a detail saying what check() returned and what it must return', async () => {
    const health = createHealth({
      db,
      checkSchema: false,
      transports: [
        { name: 'flag', check: (() => true) as never },
        { name: 'uncalled', check: (() => check) as never },
      ],
    });
    const transports = (await health.readiness()).checks.filter((c) => c.name.startsWith('transport'));
    expect(transports).toEqual([
      {
        name: 'transport flag',
        status: 'down',
        detail: 'check() returned true (boolean), not a promise: give a check such as () => consumer.check()',
      },
      {
        name: 'transport uncalled',
        status: 'down',
        detail: 'check() returned a function, not a promise: give a check such as () => consumer.check()',
      },
    ]);
  });
});
