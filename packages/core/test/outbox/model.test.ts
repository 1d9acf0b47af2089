/**
 * Model-based concurrency test of the outbox relay's transitions (fast-check commands):
 * three relays, each a RelayStore on its own Prisma client, on one PostgreSQL database,
 * interleave claims (also truly concurrent ones), publishes, heartbeats, completions, crashes,
 * lease expiry (the database clock, moved by SQL), lease recovery, release on shutdown, and
 * admin retry / markFailed. After every command the whole table is compared with the model:
 * status, retry_count per the spec's formula, claim token and lease; at most one row in
 * flight per ordering key, never past an earlier unfinished row; no completion without a live
 * lease; SENT only after a publish. Each sequence ends with a heal phase: nothing stuck.
 * Seeded and bounded: see test-support/modelRun.ts (the seed is printed on failure).
 */
import fc from 'fast-check';
import {
  createEmitter,
  createOutboxAdmin,
  fromPrisma,
  resolveOutboxOptions,
  type FailedHeadPolicy,
} from '@ferry/core';
import { relayStore } from '@ferry/core/internal/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { assertModel, commandsConstraints, modelBudget } from '../../../../test-support/modelRun';
import { adminMarkFailedCommand, adminRetryCommand, retryDuringClaimsCommand } from './model/admin';
import {
  claimAllCommand,
  claimCommand,
  completeCommand,
  emitCommand,
  heartbeatCommand,
  publishCommand,
} from './model/commands';
import { advanceCommand, crashCommand, expireCommand, recoverCommand, releaseCommand } from './model/faults';
import { healAndCheck } from './model/heal';
import type { OutboxModel } from './model/model';
import type { OutboxReal } from './model/system';

const RELAYS = 3;
const MAX_RETRIES = 3;
const MAX_CLAIMS = 2;

let t: TestDatabase;
let stores: OutboxReal['stores'];
beforeAll(async () => {
  t = await createTestDatabase();
  stores = Array.from({ length: RELAYS }, () => relayStore(fromPrisma(t.newClient({ max: 2 }))));
});
afterAll(async () => {
  await t.drop();
});

const relay = fc.nat({ max: RELAYS * 4 });
const key = fc.constantFrom<string | null>('a', 'b', 'c', 'd', 'e', null);
const kinds = fc.array(
  fc.constantFrom('sent' as const, 'sent' as const, 'retryable' as const, 'permanent' as const),
  {
    minLength: 1,
    maxLength: 4,
  },
);
const pick = fc.nat({ max: 50 });

const commandArbs = [
  fc.array(key, { minLength: 1, maxLength: 3 }).map(emitCommand),
  fc.tuple(relay, fc.integer({ min: 1, max: 4 })).map(([r, n]) => claimCommand(r, n)),
  fc.tuple(relay, fc.integer({ min: 1, max: 4 })).map(([r, n]) => claimCommand(r, n)),
  fc.integer({ min: 1, max: 3 }).map(claimAllCommand),
  relay.map(publishCommand),
  relay.map(publishCommand),
  relay.map(heartbeatCommand),
  fc.tuple(relay, kinds).map(([r, k]) => completeCommand(r, k)),
  fc.tuple(relay, kinds).map(([r, k]) => completeCommand(r, k)),
  relay.map(releaseCommand),
  relay.map(crashCommand),
  pick.map(expireCommand),
  relay.map(recoverCommand),
  fc.constant(null).map(advanceCommand),
  pick.map(adminRetryCommand),
  pick.map(adminMarkFailedCommand),
  fc.tuple(pick, fc.integer({ min: 1, max: 3 })).map(([p, n]) => retryDuringClaimsCommand(p, n)),
];

function realFor(failedHead: FailedHeadPolicy): OutboxReal {
  const options = resolveOutboxOptions({
    retry: {
      maxRetries: MAX_RETRIES,
      initialDelay: 60_000,
      backoff: failedHead === 'block' ? 'exponential' : 'fixed',
    },
    lease: { duration: 60_000, heartbeatInterval: 10_000 },
    poisonGuard: { maxClaims: MAX_CLAIMS },
    ordering: { failedHead },
  });
  const emitter = createEmitter({ retry: { maxRetries: MAX_RETRIES } });
  return {
    db: t.db,
    stores,
    laneCursors: stores.map(() => null),
    keyScanFirst: stores.map(() => false),
    admin: createOutboxAdmin(t.db),
    emitter,
    options,
  };
}

describe('outbox model', () => {
  const budget = modelBudget();

  it.each<FailedHeadPolicy>(['block', 'skip'])(
    'relays interleaving claims, crashes, expiry, recovery and admin keep every invariant (failedHead %s)',
    async (failedHead) => {
      const property = fc.asyncProperty(
        fc.commands(commandArbs, commandsConstraints(budget)),
        async (commands) => {
          await t.db.execute('DELETE FROM outbox_events');
          const real = realFor(failedHead);
          const model: OutboxModel = {
            failedHead,
            rows: new Map(),
            held: Array.from({ length: RELAYS }, () => null),
            nextSeq: 0,
          };
          await emitCommand(['a', 'a', 'b', null, 'a', 'b']).run(model, real);
          await fc.asyncModelRun(() => ({ model, real }), commands);
          await healAndCheck(model, real);
        },
      );
      await assertModel(`outbox/${failedHead}`, property, budget);
    },
    120_000,
  );
});
