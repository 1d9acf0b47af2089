/**
 * createHealth over several relays and inboxes (review 150's gap): a service running a relay per
 * destination broker (Kafka and RabbitMQ on one outbox, each with its own publisher) or several
 * Inbox instances passes them by name, `relays: { kafka, rabbitmq }`, `inboxes: { billing, ... }`;
 * each gets the single source's checks named with its name (`relay "kafka"`, `relay circuit
 * "kafka"`, `inbox worker "billing"`, `inbox handler transactions "billing"`), so the one down is
 * told from the others. The backlog checks (database-wide counts) stay once.
 *
 * Before: one `relay` and one `inbox` only; several meant several health objects merged by hand,
 * their checks all named `relay`, `relay circuit`, ...
 */
import {
  createHealth,
  createRelay,
  emit,
  FerryConfigError,
  fromPg,
  Inbox,
  type HealthCheck,
  type HealthOptions,
  type LoopSource,
  type Relay,
} from '@ferry/core';
import { InMemoryPublisher, waitUntil } from '@ferry/testing';
import { Pool } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { refusingExecutor } from '../../../../test-support/executors';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { silent } from '../outbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

function relayOn(publisher: InMemoryPublisher, db = t.db): Relay {
  return createRelay({
    db,
    publisher,
    logger: silent,
    options: { pollInterval: 20, circuit: { openMs: 60_000, maxOpenMs: 60_000 } },
  });
}

function inboxOn(): Inbox {
  return new Inbox(t.prisma, {
    logger: silent,
    handlers: { work: async () => {} },
    worker: { pollIntervalMs: 20 },
  });
}

const named = (checks: readonly HealthCheck[], name: string) => checks.find((check) => check.name === name);
const downNames = (checks: readonly HealthCheck[]) =>
  checks.filter((check) => check.status === 'down').map((check) => check.name);

describe('createHealth with relays and inboxes by name', () => {
  it("two relays on one outbox, one's circuit open: only its named circuit check is down", async () => {
    const kafka = relayOn(
      new InMemoryPublisher({ decide: () => ({ unavailable: 'kafka:9092 unreachable' }) }),
    );
    const rabbitmq = relayOn(new InMemoryPublisher());
    await emit(t.db, { type: 'health.named', payload: {} });
    // The failing relay first, so that it claims the event and opens its circuit.
    kafka.start();
    try {
      await waitUntil('the kafka circuit open', () => kafka.circuit === 'open', { timeoutMs: 10_000 });
      rabbitmq.start();
      await waitUntil('a rabbitmq cycle', () => rabbitmq.lastCycleAt !== null, { timeoutMs: 10_000 });
      const health = createHealth({ db: t.db, relays: { kafka, rabbitmq } });
      const [live, ready, details] = await Promise.all([
        health.liveness(),
        health.readiness(),
        health.details(),
      ]);
      expect(live).toMatchObject({
        status: 'up',
        checks: [
          { name: 'relay "kafka"', status: 'up' },
          { name: 'relay "rabbitmq"', status: 'up' },
        ],
      });
      expect(ready.status).toBe('up');
      expect(downNames(details.checks)).toEqual(['relay circuit "kafka"']);
      expect(named(details.checks, 'relay circuit "kafka"')?.detail).toMatch(
        /^open since .*: broker unavailable: kafka:9092 unreachable; next probe at /,
      );
      expect(named(details.checks, 'relay circuit "rabbitmq"')).toEqual({
        name: 'relay circuit "rabbitmq"',
        status: 'up',
        detail: 'closed',
      });
      // Database-wide counts: once, whatever the number of loops.
      expect(details.checks.filter((check) => check.name === 'outbox backlog')).toHaveLength(1);
      expect(details.checks.filter((check) => check.name === 'inbox backlog')).toHaveLength(1);
    } finally {
      await Promise.all([kafka.close(), rabbitmq.close()]);
    }
  }, 30_000);

  it('a relay stopped on an ended pool and a closed inbox: only their named liveness checks are down', async () => {
    const pool = listened(new Pool({ connectionString: t.url, max: 2 }));
    const ended = relayOn(new InMemoryPublisher(), fromPg(pool));
    const running = relayOn(new InMemoryPublisher());
    const billing = inboxOn();
    const shipping = inboxOn();
    const single = inboxOn();
    const health = createHealth({
      db: t.db,
      relays: { ended, running },
      inbox: single,
      inboxes: { billing, shipping },
    });
    for (const loop of [ended, running, billing, shipping, single]) loop.start();
    try {
      await waitUntil(
        'a cycle of every loop',
        () => [ended, running, billing, shipping, single].every((loop) => loop.lastCycleAt !== null),
        { timeoutMs: 10_000 },
      );
      expect((await health.liveness()).status).toBe('up');
      await pool.end();
      await waitUntil('the relay stopped', () => ended.state === 'stopped', { timeoutMs: 10_000 });
      await billing.close();
      const live = await health.liveness();
      expect(live.checks.map((check) => check.name)).toEqual([
        'relay "ended"',
        'relay "running"',
        'inbox worker',
        'inbox worker "billing"',
        'inbox worker "shipping"',
      ]);
      expect(live.status).toBe('down');
      expect(downNames(live.checks)).toEqual(['relay "ended"', 'inbox worker "billing"']);
      expect(named(live.checks, 'relay "ended"')?.detail).toMatch(/^state stopped: /);
      expect(named(live.checks, 'inbox worker "billing"')?.detail).toBe('state closed');
      const details = await health.details();
      // Each inbox's handler transactions and each relay's circuit, by name.
      expect(details.checks.map((check) => check.name)).toEqual(
        expect.arrayContaining([
          'inbox handler transactions',
          'inbox handler transactions "billing"',
          'inbox handler transactions "shipping"',
          'relay circuit "ended"',
          'relay circuit "running"',
        ]),
      );
      expect(downNames(details.checks)).toEqual(['relay "ended"', 'inbox worker "billing"']);
    } finally {
      await Promise.all([ended.close(), running.close(), billing.close(), shipping.close(), single.close()]);
    }
  }, 30_000);

  it('a relay and a relays entry side by side: `relay` keeps its unnamed checks', async () => {
    const one = { lastCycleAt: null, circuitOutage: null } satisfies LoopSource;
    const two = { lastCycleAt: null, circuitOutage: null } satisfies LoopSource;
    const health = createHealth({ db: refusingExecutor, checkSchema: false, relay: one, relays: { two } });
    expect((await health.liveness()).checks.map((check) => check.name)).toEqual(['relay', 'relay "two"']);
  });

  it('a name is quoted as JSON writes it: one with a quote or a space is told apart', async () => {
    const source = { lastCycleAt: null } satisfies LoopSource;
    const health = createHealth({
      db: refusingExecutor,
      checkSchema: false,
      inboxes: { 'eu "west"': source, 'eu west': { lastCycleAt: null } },
    });
    expect((await health.liveness()).checks.map((check) => check.name)).toEqual([
      'inbox worker "eu \\"west\\""',
      'inbox worker "eu west"',
    ]);
  });
});

describe('relays / inboxes options', () => {
  const source = (): LoopSource => ({ lastCycleAt: null });

  function refusal(options: Partial<HealthOptions>): unknown {
    try {
      createHealth({ db: refusingExecutor, checkSchema: false, ...options } as HealthOptions);
    } catch (error) {
      return error;
    }
    return 'accepted';
  }

  const shared = source();
  it.each([
    ['a string', { relays: 'kafka' }, 'relays'],
    ['an array', { inboxes: [source()] }, 'inboxes'],
    ['null', { relays: null }, 'relays'],
    ['a Map', { relays: new Map([['kafka', source()]]) }, 'relays'],
    ['one loop source in place of the record', { relays: source() }, 'relays'],
    ['an empty name', { inboxes: { '': source() } }, 'inboxes'],
    ['an entry that is no loop source', { relays: { kafka: 'relay' } }, 'relays.kafka'],
    [
      'an entry whose lastCycleAt is no Date',
      { inboxes: { billing: { lastCycleAt: 5 } } },
      'inboxes.billing.lastCycleAt',
    ],
    ['one source under two names', { relays: { kafka: shared, rabbitmq: shared } }, 'relays.rabbitmq'],
    ['the relay again in relays', { relay: shared, relays: { kafka: shared } }, 'relays.kafka'],
    ['the inbox again in inboxes', { inbox: shared, inboxes: { billing: shared } }, 'inboxes.billing'],
  ])('refuses %s', (_what, options, option) => {
    const error = refusal(options as Partial<HealthOptions>);
    expect(error).toBeInstanceOf(FerryConfigError);
    expect(error).toMatchObject({ code: 'FERRY_CONFIG_INVALID', option });
  });

  // A check's name carries the source's name (and a transport's): unbounded, one name of a
  // megabyte made every report, log line and metric label of the health endpoint a megabyte.
  it('refuses a name longer than 200 characters, naming the option without quoting the name whole', () => {
    const long = 'k'.repeat(1_000_000);
    for (const options of [
      { relays: { [long]: shared } },
      { inboxes: { [long]: shared } },
      { transports: [{ name: long, check: () => Promise.resolve() }] },
    ]) {
      const error = refusal(options as Partial<HealthOptions>);
      expect(error).toMatchObject({ code: 'FERRY_CONFIG_INVALID' });
      expect((error as Error).message.length).toBeLessThan(1_000);
      expect((error as Error).message).toMatch(/at most 200 characters/);
    }
    expect(refusal({ relays: { ['k'.repeat(200)]: shared } })).toBe('accepted');
  });

  it('names the first use of a source given twice', () => {
    const error = refusal({ relay: shared, relays: { kafka: shared } });
    expect((error as Error).message).toMatch(/same loop source as relay\b/);
  });

  it('refuses a record that cannot be read (a revoked Proxy, a getter that throws) as the option', () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(refusal({ relays: proxy })).toMatchObject({ code: 'FERRY_CONFIG_INVALID', option: 'relays' });
    const throwing = {
      get kafka(): LoopSource {
        throw new Error('no relay');
      },
    };
    expect(refusal({ relays: throwing })).toMatchObject({
      code: 'FERRY_CONFIG_INVALID',
      option: 'relays.kafka',
    });
  });

  it('reads the record once: the source checked is the source used', async () => {
    let reads = 0;
    const relays = new Proxy({ kafka: source() } as Record<string, LoopSource>, {
      get(target, key, receiver) {
        if (key === 'kafka') reads += 1;
        return reads > 1 ? 'not a source' : Reflect.get(target, key, receiver);
      },
    });
    const health = createHealth({ db: refusingExecutor, checkSchema: false, relays });
    expect(await health.liveness()).toMatchObject({
      status: 'up',
      checks: [{ name: 'relay "kafka"', status: 'up', detail: 'starting' }],
    });
    expect(reads).toBe(1);
  });

  it('leaves an entry set to undefined out, as an option left out', async () => {
    const health = createHealth({
      db: refusingExecutor,
      checkSchema: false,
      relays: { kafka: source(), rabbitmq: undefined as never },
    });
    expect((await health.liveness()).checks.map((check) => check.name)).toEqual(['relay "kafka"']);
  });
});
