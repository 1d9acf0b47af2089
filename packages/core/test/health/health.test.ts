import { randomUUID } from 'node:crypto';
import { createHealth, createRelay, emitMany, fromPg, Inbox, InboxPermanentError } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { Pool } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { waitFor } from '../outbox/helpers';

const silent = pino({ level: 'silent' });
let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

describe('createHealth', () => {
  it('liveness follows the relay and the inbox worker: up after a cycle, down once closed', async () => {
    const relay = createRelay({
      db: t.db,
      publisher: new InMemoryPublisher(),
      logger: silent,
      options: { pollInterval: 20 },
    });
    const inbox = new Inbox(t.prisma, {
      logger: silent,
      handlers: { work: async () => {} },
      worker: { pollIntervalMs: 20 },
    });
    const health = createHealth({ db: t.db, relay, inbox });
    relay.start();
    inbox.start();
    await waitFor(() => relay.lastCycleAt !== null && inbox.lastCycleAt !== null);
    expect(await health.liveness()).toMatchObject({
      status: 'up',
      checks: [
        { name: 'relay', status: 'up' },
        { name: 'inbox worker', status: 'up' },
      ],
    });
    await relay.close();
    await inbox.close();
    const after = await health.liveness();
    expect(after.status).toBe('down');
    expect(after.checks).toEqual([
      { name: 'relay', status: 'down', detail: 'state closed' },
      { name: 'inbox worker', status: 'down', detail: 'state closed' },
    ]);
  });

  it('a loop with no successful cycle within the bound is down', async () => {
    const stalled = { lastCycleAt: new Date(Date.now() - 120_000), state: 'running' };
    const health = createHealth({ db: t.db, relay: stalled, maxCycleAgeMs: 60_000 });
    const report = await health.liveness();
    expect(report.status).toBe('down');
    expect(report.checks[0]!.detail).toMatch(/^last cycle \d+ ms ago \(bound 60000\)$/);
  });

  it("leaves out a loop switched off by configuration (state 'disabled'), as one not passed", async () => {
    // Stale beyond the bound: were it checked, it would be down.
    const off = { lastCycleAt: new Date(Date.now() - 120_000), state: 'disabled' };
    const running = { lastCycleAt: new Date(), state: 'running' };
    const health = createHealth({ db: t.db, relay: running, inbox: off, maxCycleAgeMs: 60_000 });
    expect(await health.liveness()).toEqual({
      status: 'up',
      checks: [{ name: 'relay', status: 'up', detail: expect.stringMatching(/^last cycle/) }],
    });
    const relayOff = createHealth({ db: t.db, relay: off, inbox: running, maxCycleAgeMs: 60_000 });
    expect((await relayOff.liveness()).checks.map((check) => check.name)).toEqual(['inbox worker']);
  });

  it('readiness: database, schema and transports, each with a deadline', async () => {
    const ready = await createHealth({
      db: t.db,
      transports: [{ name: 'rabbitmq', check: async () => undefined }],
    }).readiness();
    expect(ready.status).toBe('up');
    expect(ready.checks.map((c) => `${c.name}:${c.status}`)).toEqual([
      'database:up',
      'schema:up',
      'transport rabbitmq:up',
    ]);

    const hung = await createHealth({
      db: t.db,
      checkTimeoutMs: 50,
      transports: [{ name: 'kafka', check: () => new Promise(() => undefined) }],
    }).readiness();
    expect(hung.status).toBe('down');
    expect(hung.checks[2]).toEqual({
      name: 'transport kafka',
      status: 'down',
      detail: 'no answer within 50 ms',
    });

    const pool = listened(new Pool({ connectionString: 'postgresql://postgres@127.0.0.1:1/none' }));
    const unreachable = await createHealth({ db: fromPg(pool) }).readiness();
    await pool.end();
    expect(unreachable.status).toBe('down');
    expect(unreachable.checks[0]!.detail).toMatch(/^FERRY_DATABASE_UNAVAILABLE: /);
  });

  it('details report FAILED and DEAD backlog against thresholds', async () => {
    const { ids } = await emitMany(t.db, [{ type: 'h', payload: {} }]);
    const relay = createRelay({
      db: t.db,
      publisher: new InMemoryPublisher({ decide: () => ({ permanent: 'no' }) }),
      logger: silent,
    });
    await relay.runOnce();
    await relay.close();
    const inbox = new Inbox(t.prisma, {
      logger: silent,
      handlers: {
        work: async () => {
          throw new InboxPermanentError('broken');
        },
      },
    });
    await inbox.accept({ consumer: 'work', messageId: randomUUID(), tenantId: 'x', payload: {} });
    await inbox.runOnce();
    await inbox.close();

    const details = await createHealth({ db: t.db }).details();
    expect(details.status).toBe('down');
    expect(details.outbox).toMatchObject({ failed: 1 });
    expect(details.inbox?.counts.DEAD).toBe(1);
    expect(details.checks.find((c) => c.name === 'outbox backlog')).toMatchObject({
      status: 'down',
      detail: '1 FAILED events',
    });
    expect(details.checks.find((c) => c.name === 'inbox backlog')?.detail).toContain('1 DEAD receipts');

    const tolerant = await createHealth({
      db: t.db,
      outboxThresholds: { maxFailed: 1 },
      inboxThresholds: { maxDead: 1 },
    }).details();
    expect(tolerant.status).toBe('up');
    expect(ids).toHaveLength(1);
  });
});
