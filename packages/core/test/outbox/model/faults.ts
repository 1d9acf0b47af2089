/** Shutdown, crash, lease expiry, recovery and retry due time commands of the outbox model. */
import type { OutboxModel } from './model';
import { liveUnder, unclaim } from './model';
import { holding, relayCommand, sameSet, unpublished, type Cmd } from './commands';
import { advanceRetries, checkInvariants, expireToken, fail, type OutboxReal } from './system';

const always = (): boolean => true;

/** Shutdown before publishing: the relay hands its claim back (release). */
export function releaseCommand(pick: number): Cmd {
  return relayCommand('release', pick, unpublished, async (m, real, relay, held) => {
    const store = real.stores[relay] as OutboxReal['stores'][number];
    const released = await store.release(held.token, held.ids);
    const live = liveUnder(m, held.token);
    if (released !== live.length) fail(`relay ${relay} released ${released}, model expects ${live.length}`);
    for (const row of live) unclaim(row, 'PENDING');
    m.held[relay] = null;
  });
}

/** The relay process dies: it forgets its claim; the rows stay PROCESSING until their lease ends. */
export function crashCommand(pick: number): Cmd {
  return relayCommand('crash', pick, holding, async (m, _real, relay) => {
    m.held[relay] = null;
  });
}

/** The lease of one outstanding claim (a crashed relay's, or a live relay's) runs out. */
export function expireCommand(pick: number): Cmd {
  const tokens = (m: Readonly<OutboxModel>): string[] =>
    // Ordered by the rows they hold (seq), not by the random tokens, so that seeds replay.
    [
      ...new Set(
        [...m.rows.values()]
          .filter((r) => r.status === 'PROCESSING' && r.leaseLive)
          .sort((a, b) => a.seq - b.seq)
          .map((r) => r.token as string),
      ),
    ];
  return {
    check: (m) => tokens(m).length > 0,
    async run(m, real) {
      const all = tokens(m);
      const token = all[pick % all.length] as string;
      await expireToken(real.db, token);
      for (const row of liveUnder(m, token)) row.leaseLive = false;
      await checkInvariants(m, real);
    },
    toString: () => `expire(claim #${pick})`,
  };
}

/** Lease recovery: expired claims back to PENDING without spending a retry, or poison-guarded. */
export function recoverCommand(pick: number): Cmd {
  return {
    check: always,
    async run(m, real) {
      const store = real.stores[pick % real.stores.length] as OutboxReal['stores'][number];
      const maxClaims = real.options.poisonGuard.maxClaims;
      const { requeued, poisoned } = await store.recover({ limit: 1_000, maxClaims });
      const expired = [...m.rows.values()].filter((r) => r.status === 'PROCESSING' && !r.leaseLive);
      const poison = expired.filter((r) => r.expiries + 1 >= maxClaims);
      sameSet(
        poisoned.map((p) => p.id),
        poison.map((r) => r.id),
        `poison guard (limit ${maxClaims} consecutive expiries)`,
      );
      if (requeued !== expired.length - poison.length)
        fail(`recovery requeued ${requeued}, model expects ${expired.length - poison.length}`);
      for (const row of expired) {
        row.expiries += 1;
        unclaim(row, poison.includes(row) ? 'FAILED' : 'PENDING');
      }
      await checkInvariants(m, real);
    },
    toString: () => `recover(relay #${pick})`,
  };
}

export function advanceCommand(): Cmd {
  return {
    check: always,
    async run(m, real) {
      await advanceRetries(real.db);
      for (const row of m.rows.values()) if (row.status === 'PENDING') row.due = true;
      await checkInvariants(m, real);
    },
    toString: () => 'advance(retries due)',
  };
}
