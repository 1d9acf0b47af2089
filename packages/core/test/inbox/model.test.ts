/**
 * Model-based concurrency test of the inbox worker's transitions (fast-check commands): three
 * workers, each with sqlWorkerOps on its own Prisma client, on one PostgreSQL database,
 * interleave claims (also truly concurrent ones), handler transactions held open after their
 * business write, fenced completions, heartbeats, handler failures with the worker's
 * reconciliation and retry / DEAD decision, crashes, lease expiry (the lease ends at the
 * database's clock_timestamp(), moved by SQL), exhaustion of abandoned claims, acceptance and
 * admin requeue. After every command every receipt and its committed business effects are
 * compared with the model: status, attempts per cycle, claim token and lease, retry due time
 * per the capped exponential formula; no completion without a live lease, never two effects.
 * Each sequence ends with a heal phase: nothing stuck. Seeded and bounded (test-support/modelRun.ts).
 */
import fc from 'fast-check';
import { Inbox, InboxAdmin, prismaTransactions, resolveInboxOptions } from '@ferry/core';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { assertModel, commandsConstraints, modelBudget } from '../../../../test-support/modelRun';
import { sqlWorkerOps } from '../../src/inbox/workerOps';
import {
  acceptCommand,
  beginCommand,
  claimAllCommand,
  claimCommand,
  completeCommand,
  heartbeatCommand,
} from './model/commands';
import {
  advanceCommand,
  crashCommand,
  exhaustCommand,
  expireCommand,
  failCommand,
  requeueCommand,
  shutdownCommand,
} from './model/faults';
import { healAndCheck } from './model/heal';
import type { InboxModel } from './model/model';
import { EFFECTS_TABLE, type InboxReal, type Tx } from './model/system';

const WORKERS = 3;

const inboxOptions = {
  handlers: { orders: async () => undefined },
  logger: pino({ level: 'silent' }),
  worker: {
    maxAttempts: 3,
    leaseMs: 60_000,
    heartbeatIntervalMs: 10_000,
    transactionTimeoutMs: 60_000,
    transactionMaxWaitMs: 10_000,
    retryBaseMs: 60_000,
    retryMaxMs: 120_000,
  },
};
const options = resolveInboxOptions(inboxOptions);

let t: TestDatabase;
let real: Omit<InboxReal, 'claims' | 'open'>;
beforeAll(async () => {
  t = await createTestDatabase();
  await t.db.execute(EFFECTS_TABLE);
  const ops = Array.from({ length: WORKERS }, () => {
    const adapter = prismaTransactions<Tx>(t.newClient({ max: 4 }));
    return sqlWorkerOps<Tx>(adapter, adapter.db, options.worker);
  });
  const inbox = new Inbox(t.prisma, inboxOptions);
  real = { db: t.db, inbox, admin: new InboxAdmin(t.prisma), ops, worker: options.worker };
});
afterAll(async () => {
  await t.drop();
});

const worker = fc.integer({ min: 0, max: WORKERS - 1 });
const pick = fc.nat({ max: 20 });

const commandArbs = [
  fc.integer({ min: 1, max: 3 }).map(acceptCommand),
  fc.tuple(worker, fc.integer({ min: 1, max: 3 })).map(([w, n]) => claimCommand(w, n)),
  fc.integer({ min: 1, max: 2 }).map(claimAllCommand),
  pick.map(beginCommand),
  pick.map(beginCommand),
  pick.map(completeCommand),
  pick.map(completeCommand),
  pick.map(heartbeatCommand),
  fc.tuple(pick, fc.boolean()).map(([p, permanent]) => failCommand(p, permanent)),
  worker.map(crashCommand),
  worker.map(shutdownCommand),
  pick.map(expireCommand),
  pick.map(expireCommand),
  worker.map(exhaustCommand),
  fc.constant(null).map(advanceCommand),
  pick.map(requeueCommand),
];

describe('inbox model', () => {
  const budget = modelBudget();

  it('workers interleaving claims, handler transactions, failures, crashes, shutdowns, expiry and requeue keep every invariant', async () => {
    const property = fc.asyncProperty(
      fc.commands(commandArbs, commandsConstraints(budget)),
      async (commands) => {
        await t.db.execute('DELETE FROM model_effects');
        await t.db.execute('DELETE FROM ferry_inbox_receipts');
        const system: InboxReal = { ...real, claims: new Map(), open: new Map() };
        const model: InboxModel = { receipts: new Map(), held: Array.from({ length: WORKERS }, () => []) };
        try {
          await acceptCommand(4).run(model, system);
          await fc.asyncModelRun(() => ({ model, real: system }), commands);
          await healAndCheck(model, system);
        } finally {
          await Promise.all([...system.open.values()].map((open) => open.finish('throw')));
        }
      },
    );
    await assertModel('inbox', property, budget);
  }, 120_000);
});
