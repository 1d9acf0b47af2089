/**
 * Review 78, the class: every value core reads off a third party's object for tracing or metrics
 * (a Publisher's `system` and destinationName, an InboxAcceptInput's fields and headers, which
 * the accept spans read before validation) is read totally: a throw is no name, a thenable gets a
 * rejection handler and is no name. And every data-derived label of the stats gauges (the inbox's
 * consumer and tenant, the outbox's tenant) takes at most maxLabelValues values, later ones
 * summed under `other` (the oldest age is their maximum), so totals stay exact.
 */
import pino from 'pino';
import { createInbox, emit, type InboxAcceptInput, type Publisher } from '@ferry/core';
import { createFerryMetrics } from '@ferry/core/metrics';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { parsePrometheusText } from '../../../test-support/prometheusText';
import { relay, statusOf } from './outbox/helpers';

jest.setTimeout(60_000);

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A rejected promise that records whether anyone handled it (called its then). */
function watchedRejection(answers: { handled: boolean }[], message: string): Promise<never> {
  const answer = { handled: false };
  answers.push(answer);
  const rejected = Promise.reject(new Error(message));
  const then = rejected.then.bind(rejected);
  rejected.then = ((...args: Parameters<typeof then>) => {
    answer.handled = true;
    return then(...args);
  }) as typeof rejected.then;
  return rejected;
}

describe('third-party values read for tracing', () => {
  beforeEach(async () => {
    await t.db.execute('DELETE FROM outbox_events');
  });

  it('a system getter that returns a rejected Promise leaves no unhandled rejection; the event is SENT', async () => {
    const { id } = await emit(t.db, { type: 'order.placed', payload: {}, destination: 'orders' });
    const answers: { handled: boolean }[] = [];
    const publisher: Publisher = new InMemoryPublisher();
    Object.defineProperty(publisher, 'system', {
      configurable: true,
      get: () => watchedRejection(answers, 'system lookup failed'),
    });
    const r = relay(t.db, publisher);
    try {
      await r.runOnce();
    } finally {
      await r.close();
    }
    await sleep(50);
    expect((await statusOf(t.db, id)).status).toBe('SENT');
    expect(answers.length).toBeGreaterThan(0);
    expect(answers.filter((answer) => !answer.handled)).toEqual([]);
  });

  it('acceptMany() with inputs whose fields or headers cannot be read answers them invalid, accepts the rest', async () => {
    const inbox = createInbox(t.prisma, { global: 'shared' });
    const answers: { handled: boolean }[] = [];
    const base = (): InboxAcceptInput => ({
      consumer: 'c',
      messageId: `m-${Math.random()}`,
      tenantId: null,
      payload: {},
    });
    const throwingSystem = base();
    Object.defineProperty(throwingSystem, 'system', {
      enumerable: true,
      get: () => {
        throw new Error('system exploded');
      },
    });
    const throwingHeaders = {
      ...base(),
      // Since review 87 acceptance copies the headers' own entries once (no toJSON read): a
      // Proxy over an empty object is read as no headers; one with an entry throws reading it.
      headers: new Proxy({ trace: 'x' } as Record<string, string>, {
        get: () => {
          throw new Error('headers exploded');
        },
      }),
    };
    const promisedConsumer = {
      ...base(),
      consumer: watchedRejection(answers, 'consumer lookup failed') as unknown as string,
    };
    let results: unknown;
    try {
      results = (
        await inbox.acceptMany([base(), throwingSystem, throwingHeaders, promisedConsumer, base()])
      ).map((result) => result.kind);
    } catch (error) {
      results = String(error);
    } finally {
      await inbox.close();
    }
    await sleep(50);
    expect(results).toEqual(['accepted', 'invalid', 'invalid', 'invalid', 'accepted']);
    expect(answers.filter((answer) => !answer.handled)).toEqual([]);
  });
});

describe('stats gauges of data-derived labels', () => {
  const MANY = 150;
  const BOUND = 100;
  beforeAll(async () => {
    await t.db.execute('DELETE FROM outbox_events');
    for (let i = 0; i < MANY; i++)
      await emit(t.db, { type: 'x', payload: {}, destination: 'd', tenantId: `tenant-${i}` });
    const inbox = createInbox(t.prisma, { global: 'shared' });
    await inbox.acceptMany(
      Array.from({ length: MANY }, (_, i) => ({
        consumer: 'orders',
        messageId: `m-${i}`,
        tenantId: `tenant-${i}`,
        payload: {},
      })),
    );
    await inbox.close();
  });

  async function scrape() {
    const metrics = createFerryMetrics({
      stats: { db: t.db, cacheMs: 0, timeoutMs: 20_000 },
      tenantLabel: true,
      logger: pino({ level: 'silent' }),
    });
    return parsePrometheusText(await metrics.registry.metrics());
  }

  it('the outbox gauges take at most maxLabelValues tenants, the rest summed under other', async () => {
    const scraped = await scrape();
    const pending = scraped.find('ferry_outbox_events', { status: 'PENDING' });
    expect(pending.reduce((sum, sample) => sum + sample.value, 0)).toBe(MANY);
    const tenants = new Set(pending.map((sample) => sample.labels.tenant));
    expect(tenants.size).toBeLessThanOrEqual(BOUND + 1);
    expect(tenants).toContain('other');
    for (const name of ['ferry_outbox_oldest_pending_age_seconds', 'ferry_outbox_expired_leases'])
      expect(new Set(scraped.find(name, {}).map((s) => s.labels.tenant)).size).toBeLessThanOrEqual(BOUND + 1);
  });

  it('the inbox gauges take at most maxLabelValues tenants, the rest summed under other', async () => {
    const scraped = await scrape();
    const pending = scraped.find('ferry_inbox_receipts', { status: 'PENDING' });
    // The acceptance test above left its own receipts: every PENDING receipt is counted.
    const [all] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ferry_inbox_receipts WHERE status = 'PENDING'`,
    );
    expect(pending.reduce((sum, sample) => sum + sample.value, 0)).toBe(all?.n);
    expect(all?.n).toBeGreaterThanOrEqual(MANY);
    const tenants = new Set(pending.map((sample) => sample.labels.tenant));
    expect(tenants.size).toBeLessThanOrEqual(BOUND + 1);
    expect(tenants).toContain('other');
    // The 150 tenants of consumer orders overflow whatever order the rows came in; the acceptance
    // test's own receipts (consumer c) may or may not.
    const other = scraped.find('ferry_inbox_oldest_unfinished_age_seconds', {
      consumer: 'orders',
      tenant: 'other',
    });
    expect(other).toHaveLength(1);
    expect(other[0]!.value).toBeGreaterThan(0);
  });
});
