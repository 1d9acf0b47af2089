/**
 * The commands of the outbox model: each runs one real transition (the RelayStore, the admin
 * API, emit, or the controllable clock), checks its direct result against the model, updates
 * the model, and then checks every invariant on the whole table.
 */
import { randomUUID } from 'node:crypto';
import type { AsyncCommand } from 'fast-check';
import type { CompletionKind } from '../../../src/outbox/sql/completeBatch';
import { outboxRetryDelayMs } from '@ferry/core/internal/testing';
import { applyClaim, claimable, liveUnder, type OutboxModel, type RowModel } from './model';
import { checkInvariants, claimAs, fail, scheduledGaps, seqOf, specDelayMs, type OutboxReal } from './system';

export type Cmd = AsyncCommand<OutboxModel, OutboxReal>;
const always = (): boolean => true;

export type Held = NonNullable<OutboxModel['held'][number]>;

/** The relays `want` accepts; a command's `pick` chooses among them (so few commands are no-ops). */
function eligible(m: Readonly<OutboxModel>, want: (held: Held | null) => boolean): number[] {
  return m.held.flatMap((h, relay) => (want(h) ? [relay] : []));
}

/** Chooses the relay for `pick`: the pick-th (modulo) of the relays `want` accepts. */
export function chooser(want: (held: Held | null) => boolean) {
  return {
    check: (m: Readonly<OutboxModel>) => eligible(m, want).length > 0,
    choose(m: Readonly<OutboxModel>, pick: number): number {
      const all = eligible(m, want);
      return all[pick % all.length] as number;
    },
  };
}

const idle = (h: Held | null): boolean => h === null;
export const holding = (h: Held | null): boolean => h !== null;
export const unpublished = (h: Held | null): boolean => h !== null && !h.published;

/**
 * A command of one holding relay: `pick` chooses among the relays `want` accepts; `body` runs
 * the transition and updates the model; every invariant is checked afterwards.
 */
export function relayCommand(
  name: string,
  pick: number,
  want: (held: Held | null) => boolean,
  body: (m: OutboxModel, real: OutboxReal, relay: number, held: Held) => Promise<void>,
  detail = '',
): Cmd {
  const relays = chooser(want);
  return {
    check: relays.check,
    async run(m, real) {
      const relay = relays.choose(m, pick);
      await body(m, real, relay, m.held[relay] as Held);
      await checkInvariants(m, real);
    },
    toString: () => `${name}(holding relay #${pick}${detail})`,
  };
}

export function sorted(ids: Iterable<string>): string[] {
  return [...ids].sort();
}

export function sameSet(actual: Iterable<string>, expected: Iterable<string>, what: string): void {
  const a = sorted(actual).join(',');
  const e = sorted(expected).join(',');
  if (a !== e) fail(`${what}: got [${a}], model expects [${e}]`);
}

export function emitCommand(keys: readonly (string | null)[]): Cmd {
  return {
    check: always,
    async run(m, real) {
      const events = keys.map((orderingKey, i) => ({ type: 'model.event', payload: { i }, orderingKey }));
      const { ids } = await real.emitter.emitMany(real.db, events);
      const seqs = await seqOf(real.db, ids);
      ids.forEach((id, i) => {
        m.rows.set(id, {
          id,
          seq: seqs.get(id) as number,
          key: keys[i] ?? null,
          maxRetries: real.options.retry.maxRetries,
          status: 'PENDING',
          retryCount: 0,
          token: null,
          leaseLive: false,
          due: true,
          expiries: 0,
          published: 0,
          overtaken: false,
        });
      });
      await checkInvariants(m, real);
    },
    toString: () => `emit(${keys.map((k) => k ?? '-').join(',')})`,
  };
}

export function claimCommand(pick: number, limit: number): Cmd {
  const relays = chooser(idle);
  return {
    check: relays.check,
    async run(m, real) {
      const relay = relays.choose(m, pick);
      const token = randomUUID();
      const expected = claimable(m);
      const ids = await claimAs(real, relay, { token, limit, failedHead: m.failedHead });
      for (const id of ids) if (!expected.has(id)) fail(`relay ${relay} claimed a row that is not claimable`);
      // Alone, a claim takes min(limit, claimable): each statement's cost is bounded, and the
      // claim continues along the lane cursor (at most one pass over the keys) until it is full.
      const want = Math.min(limit, expected.size);
      if (ids.length !== want)
        fail(`relay ${relay} claimed ${ids.length} rows; ${expected.size} claimable, limit ${limit}`);
      applyClaim(m, token, ids);
      m.held[relay] = ids.length > 0 ? { token, ids, published: false } : null;
      await checkInvariants(m, real);
    },
    toString: () => `claim(idle relay #${pick}, limit ${limit})`,
  };
}

interface RelayClaim {
  readonly relay: number;
  readonly token: string;
  readonly ids: readonly string[];
}

/** Every idle relay claims at the same moment, racing `alongside` (an operator action, or nothing). */
export async function raceClaims<T>(
  m: Readonly<OutboxModel>,
  real: OutboxReal,
  limit: number,
  alongside: () => Promise<T>,
): Promise<{ claims: RelayClaim[]; other: T }> {
  const idle = m.held.flatMap((h, relay) => (h === null ? [relay] : []));
  const [other, ...claims] = await Promise.all([
    alongside(),
    ...idle.map(async (relay) => {
      const token = randomUUID();
      const ids = await claimAs(real, relay, { token, limit, failedHead: m.failedHead });
      return { relay, token, ids };
    }),
  ]);
  return { claims: claims as RelayClaim[], other: other as T };
}

/** Checks concurrent claims (disjoint, each row claimable in `allowed`) and applies them. */
export function applyClaims(
  m: OutboxModel,
  claims: readonly RelayClaim[],
  allowed: ReadonlySet<string>,
): void {
  const seen = new Set<string>();
  for (const { relay, token, ids } of claims) {
    for (const id of ids) {
      if (seen.has(id)) fail(`two relays claimed one row at once (relay ${relay})`);
      if (!allowed.has(id)) fail(`relay ${relay} claimed a row that is not claimable`);
      seen.add(id);
    }
    applyClaim(m, token, ids);
    m.held[relay] = ids.length > 0 ? { token, ids, published: false } : null;
  }
}

/** Every idle relay claims at the same moment: SKIP LOCKED and the key rule under contention. */
export function claimAllCommand(limit: number): Cmd {
  return {
    check: (m) => m.held.some((h) => h === null),
    async run(m, real) {
      const allowed = claimable(m);
      const { claims } = await raceClaims(m, real, limit, async () => undefined);
      applyClaims(m, claims, allowed);
      await checkInvariants(m, real);
    },
    toString: () => `claimAll(limit ${limit})`,
  };
}

export function publishCommand(pick: number): Cmd {
  return relayCommand('publish', pick, unpublished, async (m, _real, _relay, held) => {
    for (const id of held.ids) (m.rows.get(id) as RowModel).published += 1;
    held.published = true;
  });
}

export function heartbeatCommand(pick: number): Cmd {
  return relayCommand('heartbeat', pick, holding, async (m, real, relay, held) => {
    const store = real.stores[relay] as OutboxReal['stores'][number];
    const renewed = await store.renew(held.token, {
      leaseMs: real.options.lease.duration,
      heartbeatIntervalMs: real.options.lease.heartbeatInterval,
    });
    const expected = liveUnder(m, held.token).length;
    if (renewed !== expected) fail(`relay ${relay} renewed ${renewed} leases, model expects ${expected}`);
  });
}

function expectedAfterCompletion(row: RowModel, kind: CompletionKind): RowModel['status'] {
  if (kind === 'sent') return 'SENT';
  return kind === 'permanent' || row.retryCount + 1 >= row.maxRetries ? 'FAILED' : 'PENDING';
}

/**
 * The relay completes its batch with the given outcomes ('sent' only for a published batch;
 * otherwise the publisher failed it). Only rows whose lease is alive may change.
 */
export function completeCommand(pick: number, kinds: readonly CompletionKind[]): Cmd {
  const body = async (m: OutboxModel, real: OutboxReal, relay: number, held: Held): Promise<void> => {
    const completions = held.ids.map((id, i) => {
      const wanted = kinds[i % kinds.length] ?? 'sent';
      const kind: CompletionKind = wanted === 'sent' && !held.published ? 'retryable' : wanted;
      const attempt = (m.rows.get(id) as RowModel).retryCount + 1;
      const delayMs = outboxRetryDelayMs(real.options.retry, attempt);
      return { id, kind, error: kind === 'sent' ? null : 'model failure', delayMs };
    });
    const store = real.stores[relay] as OutboxReal['stores'][number];
    const done = await store.complete(held.token, completions);
    const live = new Set(liveUnder(m, held.token).map((r) => r.id));
    for (const row of done)
      if (!live.has(row.id))
        fail(`relay ${relay} completed a row without a live lease (completion without lease)`);
    sameSet(
      done.map((r) => r.id),
      live,
      `relay ${relay} completion`,
    );
    const retried: string[] = [];
    for (const c of completions) {
      if (!live.has(c.id)) continue;
      const row = m.rows.get(c.id) as RowModel;
      const status = expectedAfterCompletion(row, c.kind);
      if (c.kind !== 'sent') row.retryCount += 1;
      Object.assign(row, { status, token: null, leaseLive: false, due: false, expiries: 0 });
      if (status === 'PENDING') retried.push(c.id);
    }
    const gaps = await scheduledGaps(real.db, retried);
    for (const id of retried) {
      const want = specDelayMs(real.options.retry, (m.rows.get(id) as RowModel).retryCount);
      if (gaps.get(id) !== want)
        fail(`retry scheduled ${gaps.get(id)} ms after the failure, spec says ${want}`);
    }
    m.held[relay] = null;
  };
  return relayCommand('complete', pick, holding, body, `, ${kinds.join('/')}`);
}
