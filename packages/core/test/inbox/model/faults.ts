/** Failure, crash, lease expiry, exhaustion, retry due time and admin requeue commands of the inbox model. */
import type { AsyncCommand } from 'fast-check';
import { owns, settle, type HeldClaim, type InboxModel, type ReceiptModel } from './model';
import { advanceRetries, checkInvariants, expireToken, fail, scheduledGap, type InboxReal } from './system';
import { abandon, completeHeld, heldCommand } from './commands';

type Cmd = AsyncCommand<InboxModel, InboxReal>;

/**
 * The handler throws (a permanent error, or an ordinary one): its transaction rolls back, and
 * the worker settles as it does: reconcile by reading the claim, then DEAD (permanent or
 * attempts exhausted) or RETRYABLE after the capped exponential delay (jitter pinned to 1).
 */
export function failCommand(pick: number, permanent: boolean): Cmd {
  const body = async (m: InboxModel, real: InboxReal, worker: number, claim: HeldClaim): Promise<void> => {
    const claimed = real.claims.get(claim.token) as NonNullable<ReturnType<typeof real.claims.get>>;
    const ops = real.ops[worker] as InboxReal['ops'][number];
    await abandon(m, real, worker, claim);
    const state = await ops.readClaimState(claimed);
    const mine = owns(m, claim);
    if (state !== (mine ? 'owned' : 'lost'))
      fail(`reconciliation read ${state}, model expects ${mine ? 'owned' : 'lost'}`);
    if (!mine) return;
    const r = m.receipts.get(claim.id) as ReceiptModel;
    if (permanent || r.attempts >= r.maxAttempts) {
      if (!(await ops.markDead(claimed, 'model failure'))) fail('markDead of an owned claim was fenced out');
      settle(r, 'DEAD');
      return;
    }
    // The capped exponential ceiling (jitter pinned to 1), computed from the formula here.
    const want = Math.min(real.worker.retryMaxMs, real.worker.retryBaseMs * 2 ** (r.attempts - 1));
    if (!(await ops.scheduleRetry(claimed, want, 'model failure')))
      fail('scheduleRetry of an owned claim was fenced out');
    settle(r, 'RETRYABLE');
    const gap = await scheduledGap(real.db, r.id);
    if (gap !== want) fail(`retry due ${gap} ms after the failure, the formula says ${want}`);
  };
  return heldCommand('fail', pick, undefined, body, { detail: permanent ? ', permanent' : ', retryable' });
}

/** The worker process dies: open handler transactions roll back, claims are forgotten. */
export function crashCommand(worker: number): Cmd {
  return {
    check: (m) => (m.held[worker] ?? []).length > 0,
    async run(m, real) {
      for (const claim of [...(m.held[worker] ?? [])]) await abandon(m, real, worker, claim);
      await checkInvariants(m, real);
    },
    toString: () => `crash(worker ${worker})`,
  };
}

/**
 * The worker shuts down cleanly: it waits for its running handlers (they complete, fenced) and
 * leaves claims whose handler never started to their lease, as close() does.
 */
export function shutdownCommand(worker: number): Cmd {
  return {
    check: (m) => (m.held[worker] ?? []).length > 0,
    async run(m, real) {
      for (const claim of [...(m.held[worker] ?? [])].filter((c) => c.open))
        await completeHeld(m, real, worker, claim);
      for (const claim of [...(m.held[worker] ?? [])]) await abandon(m, real, worker, claim);
      await checkInvariants(m, real);
    },
    toString: () => `shutdown(worker ${worker})`,
  };
}

export function expireCommand(pick: number): Cmd {
  const live = (m: Readonly<InboxModel>): ReceiptModel[] =>
    // In acceptance order (ids are random; the order must not depend on them, or seeds would not replay).
    [...m.receipts.values()].filter((r) => r.status === 'PROCESSING' && r.leaseLive);
  return {
    check: (m) => live(m).length > 0,
    async run(m, real) {
      const all = live(m);
      const r = all[pick % all.length] as ReceiptModel;
      await expireToken(real.db, r.token as string);
      r.leaseLive = false;
      await checkInvariants(m, real);
    },
    toString: () => `expire(lease #${pick})`,
  };
}

/** Abandoned claims whose cycle budget is spent become DEAD. */
export function exhaustCommand(worker: number): Cmd {
  return {
    check: () => true,
    async run(m, real) {
      const dead = await (real.ops[worker] as InboxReal['ops'][number]).exhaustExpired(100);
      const want = [...m.receipts.values()].filter(
        (r) => r.status === 'PROCESSING' && !r.leaseLive && r.attempts >= r.maxAttempts,
      );
      const got = dead
        .map((d) => d.id)
        .sort()
        .join(',');
      if (
        got !==
        want
          .map((r) => r.id)
          .sort()
          .join(',')
      )
        fail(`exhaustion made [${got}] DEAD, model expects others`);
      for (const r of want) settle(r, 'DEAD');
      await checkInvariants(m, real);
    },
    toString: () => `exhaust(worker ${worker})`,
  };
}

export function advanceCommand(): Cmd {
  return {
    check: () => true,
    async run(m, real) {
      await advanceRetries(real.db);
      for (const r of m.receipts.values())
        if (r.status === 'PENDING' || r.status === 'RETRYABLE') r.due = true;
      await checkInvariants(m, real);
    },
    toString: () => 'advance(retries due)',
  };
}

/** Operator requeue at the observed version: only DEAD receipts; the cycle budget resets. */
export function requeueCommand(pick: number): Cmd {
  return {
    check: (m) => m.receipts.size > 0,
    async run(m, real) {
      const all = [...m.receipts.values()]; // acceptance order
      const r = all[pick % all.length] as ReceiptModel;
      const scoped = real.admin.forTenant('acme');
      const record = await scoped.get(r.id);
      if (!record) fail('admin get lost a receipt');
      const result = await scoped
        .requeue({ id: r.id, expectedVersion: record.rowVersion, reason: 'model', actor: 'model' })
        .then(
          () => 'requeued' as const,
          (error: { code?: string }) => error.code ?? 'error',
        );
      const want = r.status === 'DEAD' ? 'requeued' : 'conflict';
      if ((result === 'requeued') !== (want === 'requeued'))
        fail(`requeue of a ${r.status} receipt: ${result}`);
      if (result === 'requeued') Object.assign(r, { status: 'PENDING', attempts: 0, due: true });
      await checkInvariants(m, real);
    },
    toString: () => `requeue(receipt #${pick})`,
  };
}
