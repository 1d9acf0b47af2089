import { randomUUID } from 'node:crypto';
import { Inbox, InboxPermanentError } from '@ferry/core';
import pino from 'pino';
import { runCli } from '@ferry/cli';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { captureIo } from './io';

/** The operator session of the README: list DEAD -> dry-run requeue -> requeue -> audit; health; top. */
describe('ferry operator session', () => {
  let t: TestDatabase;
  let inbox: Inbox;
  let broken = true;

  async function cli(...argv: string[]) {
    const io = captureIo();
    const code = await runCli([...argv, '--database-url', t.url], io, { FERRY_ACTOR: 'alice' });
    return { code, ...io };
  }

  beforeAll(async () => {
    t = await createTestDatabase();
    inbox = new Inbox(t.prisma, {
      logger: pino({ level: 'silent' }),
      handlers: {
        payments: async () => {
          if (broken) throw new InboxPermanentError('card service rejected the schema');
        },
      },
    });
  });
  afterAll(async () => {
    await inbox.close();
    await t.drop();
  });

  it('list DEAD, dry-run requeue, requeue, then the audit trail shows both', async () => {
    const { record } = await inbox.accept({
      consumer: 'payments',
      messageId: randomUUID(),
      tenantId: 'acme',
      payload: {},
    });
    await inbox.runOnce();

    const healthBefore = await cli('health');
    expect(healthBefore.code).toBe(1);
    expect(healthBefore.lines).toEqual(
      expect.arrayContaining(['down inbox backlog: 1 DEAD receipts (threshold 0)']),
    );

    const dead = await cli('inbox', 'list', '--status', 'dead', '--tenant', 'acme', '--json');
    const [item] = (JSON.parse(dead.lines[0]!) as { items: Array<{ id: string; rowVersion: number }> }).items;
    expect(item?.id).toBe(record.id);
    const target = `${item!.id}:${item!.rowVersion}`;

    const dry = await cli(
      'inbox',
      'requeue',
      target,
      '--tenant',
      'acme',
      '--reason',
      'card service fixed',
      '--dry-run',
    );
    expect(dry.lines).toEqual([`${record.id} applied (dry run)`]);
    broken = false;
    const real = await cli('inbox', 'requeue', target, '--tenant', 'acme', '--reason', 'card service fixed');
    expect(real.code).toBe(0);
    await inbox.runOnce();

    const audit = await cli('audit', 'list', '--tenant', 'acme', '--json');
    const { items } = JSON.parse(audit.lines[0]!) as {
      items: Array<{
        action: string;
        actor: string;
        reason: string;
        ids: string[];
        outcome: string;
        dryRun: boolean;
      }>;
    };
    expect(
      items.map(({ action, actor, reason, ids, outcome, dryRun }) => ({
        action,
        actor,
        reason,
        ids,
        outcome,
        dryRun,
      })),
    ).toEqual([
      {
        action: 'inbox.requeue',
        actor: 'alice',
        reason: 'card service fixed',
        ids: [record.id],
        outcome: 'applied',
        dryRun: false,
      },
      {
        action: 'inbox.requeue',
        actor: 'alice',
        reason: 'card service fixed',
        ids: [record.id],
        outcome: 'applied',
        dryRun: true,
      },
    ]);
    const text = await cli('audit', 'list', '--action', 'inbox.requeue', '--id', record.id, '--limit', '1');
    expect(text.lines).toHaveLength(1);
    expect(text.lines[0]).toMatch(
      / inbox\.requeue applied-run outcome=applied actor="alice" scope=tenant:acme reason="card service fixed" /,
    );
    expect(text.errors.join('\n')).toContain('more rows: --cursor');

    const healthAfter = await cli('health', '--json');
    expect(healthAfter.code).toBe(0);
    expect(JSON.parse(healthAfter.lines[0]!)).toMatchObject({
      status: 'up',
      inbox: { counts: { COMPLETED: 1, DEAD: 0 } },
    });
  });

  it('top / watch print plain lines when not a TTY, one per refresh', async () => {
    const top = await cli('top', '--iterations', '2', '--interval', '1ms');
    expect(top.code).toBe(0);
    expect(top.lines).toHaveLength(2);
    expect(top.lines[1]).toMatch(
      / \| outbox pending=\d+ processing=\d+ sent=\d+ FAILED=\d+ .* \| inbox pending=\d+ .*DEAD=\d+ /,
    );
    const watch = await cli('watch', '--iterations', '1', '--json');
    expect(JSON.parse(watch.lines[0]!)).toMatchObject({
      status: expect.any(String),
      outbox: { sent: expect.any(Number) },
    });
  });

  it('top redraws the screen on a terminal; a mutation on a terminal still prints one outcome per id', async () => {
    const io = { ...captureIo(), isTTY: true };
    expect(await runCli(['top', '--iterations', '1', '--database-url', t.url], io, {})).toBe(0);
    expect(io.lines[0]!.startsWith('\x1b[2J\x1b[H')).toBe(true);
    expect(io.lines[0]!.split('\n')).toHaveLength(3);
    const retry = { ...captureIo(), isTTY: true };
    const missing = randomUUID();
    expect(await runCli(['outbox', 'retry', missing, '--database-url', t.url], retry, {})).toBe(1);
    expect(retry.lines).toEqual([`${missing} not_found`]);
  });

  it('health exits 1 with FERRY_DATABASE_UNAVAILABLE detail when the database is down', async () => {
    const io = captureIo();
    const code = await runCli(['health', '--database-url', 'postgresql://postgres@127.0.0.1:1/none'], io, {});
    expect(code).toBe(1);
    expect(io.lines[0]).toMatch(/^down database: FERRY_DATABASE_UNAVAILABLE: /);
  });
});
