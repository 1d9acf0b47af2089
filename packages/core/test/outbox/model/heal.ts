/**
 * "Nothing stuck once the faults stop": live relays finish what they hold, crashed relays'
 * leases run out, and one relay keeps recovering, claiming, publishing and completing until
 * nothing is claimable. Then every row must be SENT (published at least once) or legitimately
 * unsent: FAILED, or waiting behind a FAILED head of its key under the 'block' policy.
 */
import { healPhase } from '../../../../../test-support/modelRun';
import { claimable, type OutboxModel } from './model';
import { claimCommand, completeCommand, publishCommand } from './commands';
import { advanceCommand, expireCommand, recoverCommand, releaseCommand } from './faults';
import { fail, type OutboxReal } from './system';
import { legitimatelyUnsent } from './model';

async function finishHeld(m: OutboxModel, real: OutboxReal): Promise<void> {
  for (let first = m.held.find((h) => h); first; first = m.held.find((h) => h)) {
    // Pick 0 is the first holding relay: completed if it published, else released.
    if (first.published) await completeCommand(0, ['sent']).run(m, real);
    else await releaseCommand(0).run(m, real);
  }
}

async function expireAll(m: OutboxModel, real: OutboxReal): Promise<void> {
  const expire = expireCommand(0);
  while (expire.check(m)) await expire.run(m, real);
}

/** The relay's batch in the heal phase: small, so the lane cursor has to rotate to reach every key. */
const HEAL_BATCH = 2;

async function heal(m: OutboxModel, real: OutboxReal): Promise<void> {
  await finishHeld(m, real);
  for (let round = 0; round < 3 * m.rows.size + 5; round += 1) {
    await expireAll(m, real);
    await recoverCommand(0).run(m, real);
    await advanceCommand().run(m, real);
    if (claimable(m).size === 0) break;
    // claimCommand fails a claim that takes fewer than min(limit, claimable) rows.
    await claimCommand(0, HEAL_BATCH).run(m, real);
    await publishCommand(0).run(m, real);
    await completeCommand(0, ['sent']).run(m, real);
  }
  for (const row of m.rows.values()) {
    if (row.status === 'SENT') continue;
    if (!legitimatelyUnsent(m, row)) fail(`row seq ${row.seq} stuck ${row.status} after the faults stopped`);
  }
}

export function healAndCheck(m: Parameters<typeof heal>[0], real: Parameters<typeof heal>[1]): Promise<void> {
  return healPhase(() => heal(m, real));
}
