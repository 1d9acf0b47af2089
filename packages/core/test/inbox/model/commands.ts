/**
 * The commands of the inbox model: each runs real worker transitions (claim, renew, the handler
 * transaction with its fenced completion, failure settlement, exhaustion), acceptance, admin
 * requeue or the controllable clock; checks the direct result; updates the model; then checks
 * every invariant.
 */
import { randomUUID } from 'node:crypto';
import type { AsyncCommand } from 'fast-check';
import { owns, settle, type HeldClaim, type InboxModel, type ReceiptModel } from './model';
import { claimable } from './model';
import { checkInvariants, expectBeginRefused, fail, openHandlerTx, type InboxReal } from './system';

type Cmd = AsyncCommand<InboxModel, InboxReal>;

const MAX_OPEN = 2;

function receipt(m: InboxModel, id: string): ReceiptModel {
  return m.receipts.get(id) as ReceiptModel;
}

/**
 * `pick` chooses among the claims of every worker (filtered by `open`), so that few generated
 * commands are no-ops; `worker` is the worker holding the chosen claim.
 */
export function pickHeld(
  m: Readonly<InboxModel>,
  pick: number,
  open?: boolean,
): { worker: number; claim: HeldClaim } | undefined {
  // In acceptance order of the receipts, not by worker or claim order (which concurrent claims
  // and RETURNING leave to PostgreSQL), so that a seed replays the same choices.
  const order = new Map([...m.receipts.keys()].map((id, i) => [id, i]));
  const all = m.held
    .flatMap((claims, worker) =>
      claims.filter((c) => open === undefined || c.open === open).map((claim) => ({ worker, claim })),
    )
    .sort((a, b) => (order.get(a.claim.id) ?? 0) - (order.get(b.claim.id) ?? 0));
  return all[pick % Math.max(1, all.length)];
}

function drop(m: InboxModel, worker: number, claim: HeldClaim): void {
  m.held[worker] = (m.held[worker] ?? []).filter((c) => c !== claim);
}

/**
 * A command on one held claim: `pick` chooses among every worker's claims (open, not open, or
 * either); `body` runs the transition as the holding worker and updates the model; every
 * invariant is checked afterwards. `allowed` narrows when the command may run.
 */
export function heldCommand(
  name: string,
  pick: number,
  open: boolean | undefined,
  body: (m: InboxModel, real: InboxReal, worker: number, claim: HeldClaim) => Promise<void>,
  options: { detail?: string; allowed?: (m: Readonly<InboxModel>, worker: number) => boolean } = {},
): Cmd {
  return {
    check: (m) => {
      const chosen = pickHeld(m, pick, open);
      return chosen !== undefined && (options.allowed?.(m, chosen.worker) ?? true);
    },
    async run(m, real) {
      const { worker, claim } = pickHeld(m, pick, open) as { worker: number; claim: HeldClaim };
      await body(m, real, worker, claim);
      await checkInvariants(m, real);
    },
    toString: () => `${name}(claim #${pick}${options.detail ?? ''})`,
  };
}

/** The worker gives a claim up (lost lease, crash): an open handler transaction rolls back. */
export async function abandon(
  m: InboxModel,
  real: InboxReal,
  worker: number,
  claim: HeldClaim,
): Promise<void> {
  const open = real.open.get(claim.token);
  real.open.delete(claim.token);
  drop(m, worker, claim);
  if (open && (await open.finish('throw')) !== 'rolled back') fail('a failed handler transaction committed');
}

export function acceptCommand(count: number): Cmd {
  return {
    check: () => true,
    async run(m, real) {
      const inputs = Array.from({ length: count }, () => ({
        consumer: 'orders',
        messageId: randomUUID(),
        tenantId: 'acme',
        payload: { n: m.receipts.size },
      }));
      const results = await real.inbox.acceptDetailed(inputs);
      for (const result of results) {
        if (result.kind !== 'accepted') fail(`a new message was not accepted: ${result.kind}`);
        const { id, maxAttempts } = result.record;
        m.receipts.set(id, {
          id,
          maxAttempts,
          status: 'PENDING',
          attempts: 0,
          token: null,
          leaseLive: false,
          due: true,
          effects: 0,
        });
      }
      await checkInvariants(m, real);
    },
    toString: () => `accept(${count})`,
  };
}

function applyClaims(
  m: InboxModel,
  real: InboxReal,
  worker: number,
  claimed: readonly { id: string; claimToken: string }[],
): void {
  for (const c of claimed) {
    const r = receipt(m, c.id);
    Object.assign(r, {
      status: 'PROCESSING',
      attempts: r.attempts + 1,
      token: c.claimToken,
      leaseLive: true,
      due: false,
    });
    (m.held[worker] as HeldClaim[]).push({ id: c.id, token: c.claimToken, open: false });
  }
  void real;
}

export function claimCommand(worker: number, limit: number): Cmd {
  return {
    check: () => true,
    async run(m, real) {
      const expected = claimable(m);
      const claimed = await (real.ops[worker] as InboxReal['ops'][number]).claim(limit);
      for (const c of claimed) {
        if (!expected.has(c.id)) fail(`worker ${worker} claimed a receipt that is not claimable`);
        real.claims.set(c.claimToken, c);
      }
      if (claimed.length !== Math.min(limit, expected.size))
        fail(`worker ${worker} claimed ${claimed.length} of ${expected.size} claimable (limit ${limit})`);
      applyClaims(m, real, worker, claimed);
      await checkInvariants(m, real);
    },
    toString: () => `claim(worker ${worker}, limit ${limit})`,
  };
}

/** Every worker claims at the same moment. */
export function claimAllCommand(limit: number): Cmd {
  return {
    check: () => true,
    async run(m, real) {
      const expected = claimable(m);
      const results = await Promise.all(real.ops.map((ops) => ops.claim(limit)));
      const seen = new Set<string>();
      results.forEach((claimed, worker) => {
        for (const c of claimed) {
          if (seen.has(c.id)) fail('two workers claimed one receipt at once');
          if (!expected.has(c.id)) fail(`worker ${worker} claimed a receipt that is not claimable`);
          seen.add(c.id);
          real.claims.set(c.claimToken, c);
        }
        applyClaims(m, real, worker, claimed);
      });
      await checkInvariants(m, real);
    },
    toString: () => `claimAll(limit ${limit})`,
  };
}

/** The worker starts the handler transaction of one of its claims (business row written). */
export function beginCommand(pick: number): Cmd {
  // At most MAX_OPEN handler transactions per worker: each holds one of its pool's connections.
  const allowed = (m: Readonly<InboxModel>, worker: number): boolean =>
    (m.held[worker] ?? []).filter((c) => c.open).length < MAX_OPEN;
  const body = async (m: InboxModel, real: InboxReal, worker: number, claim: HeldClaim): Promise<void> => {
    const ops = real.ops[worker] as InboxReal['ops'][number];
    const receipt = real.claims.get(claim.token) as never;
    if (!owns(m, claim)) {
      // The claim check at the handler transaction's start refuses a lost lease: no business write.
      await expectBeginRefused(ops, receipt);
      await abandon(m, real, worker, claim);
      return;
    }
    real.open.set(claim.token, await openHandlerTx(ops, receipt));
    claim.open = true;
  };
  return heldCommand('begin', pick, false, body, { allowed });
}

/** The handler of `claim` returns: its completion is written in its transaction, fenced by the lease. */
export async function completeHeld(
  m: InboxModel,
  real: InboxReal,
  worker: number,
  claim: HeldClaim,
): Promise<void> {
  const live = owns(m, claim);
  const open = real.open.get(claim.token) as NonNullable<ReturnType<typeof real.open.get>>;
  const outcome = await open.finish('complete');
  real.open.delete(claim.token);
  drop(m, worker, claim);
  if (outcome === 'committed' && !live) fail(`worker ${worker} committed a completion without a live lease`);
  if (outcome === 'rolled back' && live) fail(`worker ${worker} could not complete a claim it owns`);
  if (outcome === 'committed') {
    const r = receipt(m, claim.id);
    settle(r, 'COMPLETED');
    r.effects += 1;
  }
}

export function completeCommand(pick: number): Cmd {
  return heldCommand('complete', pick, true, completeHeld);
}

export function heartbeatCommand(pick: number): Cmd {
  return heldCommand('heartbeat', pick, undefined, async (m, real, worker, claim) => {
    const ops = real.ops[worker] as InboxReal['ops'][number];
    const renewed = await ops.renew(real.claims.get(claim.token) as never);
    if (renewed !== owns(m, claim))
      fail(`worker ${worker} renewal ${renewed}, model expects ${owns(m, claim)}`);
    if (!renewed) await abandon(m, real, worker, claim);
  });
}
