/**
 * "Nothing stuck once the faults stop": workers finish their open handlers, every other claim is
 * abandoned and its lease runs out, and one worker keeps claiming and completing until nothing
 * is claimable. Then every receipt is COMPLETED with exactly one business effect, or DEAD
 * (a permanent failure or a spent cycle budget) with none.
 */
import { healPhase } from '../../../../../test-support/modelRun';
import { abandon, beginCommand, claimCommand, completeCommand } from './commands';
import { advanceCommand, exhaustCommand, expireCommand } from './faults';
import { claimable, type InboxModel } from './model';
import { fail, type InboxReal } from './system';

async function finishWorkers(m: InboxModel, real: InboxReal): Promise<void> {
  for (let worker = 0; worker < m.held.length; worker += 1) {
    const complete = completeCommand(0);
    while (complete.check(m)) await complete.run(m, real);
    for (const claim of [...(m.held[worker] ?? [])]) await abandon(m, real, worker, claim);
  }
}

async function heal(m: InboxModel, real: InboxReal): Promise<void> {
  await finishWorkers(m, real);
  const maxAttempts = Math.max(1, ...[...m.receipts.values()].map((r) => r.maxAttempts));
  for (let round = 0; round < m.receipts.size * maxAttempts + 3; round += 1) {
    const expire = expireCommand(0);
    while (expire.check(m)) await expire.run(m, real);
    await exhaustCommand(0).run(m, real);
    await advanceCommand().run(m, real);
    if (claimable(m).size === 0) break;
    await claimCommand(0, 1_000).run(m, real);
    // One handler transaction at a time: each holds a connection of the worker's pool.
    for (const begin = beginCommand(0); begin.check(m);) {
      await begin.run(m, real);
      await completeCommand(0).run(m, real);
    }
  }
  for (const r of m.receipts.values()) {
    if (r.status === 'COMPLETED' && r.effects === 1) continue;
    if (r.status === 'DEAD' && r.effects === 0) continue;
    fail(`receipt ${r.id.slice(0, 8)} stuck ${r.status} (${r.effects} effects) after the faults stopped`);
  }
}

export function healAndCheck(m: Parameters<typeof heal>[0], real: Parameters<typeof heal>[1]): Promise<void> {
  return healPhase(() => heal(m, real));
}
