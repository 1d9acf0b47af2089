import { readStats } from '../inbox/sql/stats';
import { openedBy, type CircuitOutage } from '../outbox/circuit';
import { createOutboxAdmin } from '../outbox/admin';
import { verifySchema, type CheckSchemaResult } from '../schema/checkSchema';
import { boundedExecutor } from '../sql/boundedExecutor';
import { describeCause } from '../transport/errors';
import { resolveHealthOptions } from './options';
import { loopClock } from './loopClock';
import { received } from '../optionChecks';
import type {
  FerryHealth,
  HealthCheck,
  HealthDetails,
  HealthOptions,
  HealthReport,
  LoopSource,
  TransportProbe,
} from './types';

const up = (name: string, detail: string): HealthCheck => ({ name, status: 'up', detail });
const down = (name: string, detail: string): HealthCheck => ({ name, status: 'down', detail });

function report(checks: HealthCheck[]): HealthReport {
  return { status: checks.every((c) => c.status === 'up') ? 'up' : 'down', checks };
}

/** Resolves with `work`'s check, or a down check once `timeoutMs` passes. */
async function probe(name: string, timeoutMs: number, work: () => Promise<string>): Promise<HealthCheck> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<HealthCheck>((resolve) => {
    timer = setTimeout(() => resolve(down(name, `no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([work().then((detail) => up(name, detail)), deadline]);
  } catch (error) {
    return down(name, describeCause(error));
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Whether the inbox source's worker is switched off by configuration: state 'disabled' (as
 * @ferry/nestjs's InboxService says), or core's own Inbox with `worker.enabled` false that was
 * never started (idle, no cycle: an acceptance-only process). One started by hand is checked.
 */
function switchedOff(source: LoopSource): boolean {
  if (source.state === 'disabled') return true;
  if (source.state !== 'idle' || source.lastCycleAt !== null) return false;
  const { options } = source as { options?: { worker?: { enabled?: unknown } } };
  return options?.worker?.enabled === false;
}

/** LoopSource states that are not alive, however recent the last cycle. */
const NOT_ALIVE: ReadonlySet<string> = new Set(['closing', 'closed', 'stopped', 'not started']);

/**
 * Health over the relays, the inbox workers and the transports. Liveness reads the loops'
 * last successful cycle (no database); readiness probes the database, ferry's schema and
 * each transport, each with a deadline; details adds backlog counts against thresholds.
 */
export function createHealth(given: HealthOptions): FerryHealth {
  // `options` is the snapshot of `given` (each option read once, as checked).
  const {
    options,
    relays,
    inboxes,
    maxCycleAgeMs: maxAge,
    checkTimeoutMs: timeoutMs,
  } = resolveHealthOptions(given);
  // A probe that gives up gives its statement up too (on fromPg its connection is destroyed), so
  // probes of a silent database do not hold the pool's connections for good; details' reads
  // have the same deadline.
  const db = boundedExecutor(options.db, timeoutMs, 'health');
  const createdAt = Date.now();
  const clock = loopClock();

  function loop(name: string, source: LoopSource): HealthCheck {
    if (NOT_ALIVE.has(source.state ?? '')) {
      const why = typeof source.stopReason === 'string' ? `: ${source.stopReason}` : '';
      return down(name, `state ${source.state}${why}`);
    }
    const last = source.lastCycleAt?.getTime() ?? null;
    const now = clock(source, last);
    const age = now - (last ?? createdAt);
    // The next cycle is due one poll interval after the last, or later when the loop says so (a
    // relay waiting out an open circuit): the bound counts from then.
    const poll = source.pollIntervalMs ?? 0;
    const dueAt = Math.max((last ?? createdAt) + poll, source.nextCycleDueAt?.getTime() ?? 0);
    if (now <= dueAt + maxAge) return up(name, last === null ? 'starting' : `last cycle ${age} ms ago`);
    const bound = poll === 0 ? `bound ${maxAge}` : `bound ${maxAge} past the ${poll} ms poll interval`;
    return down(
      name,
      last === null ? `no cycle in ${age} ms (${bound})` : `last cycle ${age} ms ago (${bound})`,
    );
  }

  async function liveness(): Promise<HealthReport> {
    const checks: HealthCheck[] = [];
    // A loop switched off by configuration is left out, as a loop not passed is.
    for (const { suffix, source } of relays) {
      if (source.state !== 'disabled') checks.push(loop(`relay${suffix}`, source));
    }
    for (const { suffix, source } of inboxes) {
      if (!switchedOff(source)) checks.push(loop(`inbox worker${suffix}`, source));
    }
    return report(checks);
  }

  async function readiness(): Promise<HealthReport> {
    const checks = [
      probe('database', timeoutMs, async () => {
        await db.query('SELECT 1');
        return 'reachable';
      }),
    ];
    if (options.checkSchema ?? true) {
      checks.push(probe('schema', timeoutMs, () => verifySchema(db).then(schemaDetail)));
    }
    for (const t of options.transports ?? []) {
      checks.push(probe(`transport ${t.name}`, timeoutMs, () => transportReady(t)));
    }
    return report(await Promise.all(checks));
  }

  /**
   * Each inbox worker's handler transactions: down once they have got no session for longer than
   * maxCycleAgeMs (an outage of the application's pool, which may not be ferry's: liveness and
   * readiness stay up, since a restart would not bring it back and a readiness that flapped with it
   * would take every instance out of its load balancer at once; review 105), or once its claims have
   * cycled that long, from the first give-back to the last (given back for leases lost before their
   * handler, none begun since: a database whose round trips outlast the lease; nothing goes DEAD, so
   * nothing else says so; review 157). Left out when
   * the source says neither, or its worker is switched off.
   */
  function handlerSessions(): HealthCheck[] {
    return inboxes.flatMap(({ suffix, source }) =>
      handlerSession(`inbox handler transactions${suffix}`, source),
    );
  }

  function handlerSession(name: string, inbox: LoopSource): HealthCheck[] {
    if (switchedOff(inbox)) return [];
    const { sessionOutage: outage, claimCycling: cycling } = inbox;
    if (outage === undefined && cycling === undefined) return [];
    const found: Array<{ age: number; detail: string }> = [];
    if (outage) {
      const since = outage.since.getTime();
      const now = clock(inbox, since, 'sessionOutage.since');
      const age = now - since;
      const detail =
        `no session for a handler transaction in ${age} ms (bound ${maxAge}; since ` +
        `${outage.since.toISOString()}, ${outage.transactions} claims given back, the last ` +
        `${now - outage.lastAt.getTime()} ms ago): ${outage.lastError}`;
      found.push({ age, detail });
    }
    if (cycling) {
      // From the first give-back to the last, not to now: claims that cycle are given back again
      // and again; one batch lost once (a stalled event loop) whose claims another replica then
      // ran, this worker idle, is no cycle, and aged to now it was down until its next message.
      // Both ages read on the loop clock: a wall-clock step between the two stamps counts for neither.
      const since = cycling.since.getTime();
      const now = clock(inbox, since, 'claimCycling.since');
      const last = cycling.lastAt.getTime();
      const lastAge = clock(inbox, last, 'claimCycling.lastAt') - last;
      const age = now - since - lastAge;
      const detail =
        `claims given back for leases lost before their handler, no handler started, for ${age} ms ` +
        `(bound ${maxAge}; since ${cycling.since.toISOString()}, ${cycling.claims} claims, the last ` +
        `${lastAge} ms ago)`;
      found.push({ age, detail });
    }
    if (found.length === 0) return [up(name, 'no outage')];
    const detail = found.map((f) => f.detail).join('; ');
    return [found.some((f) => f.age > maxAge) ? down(name, detail) : up(name, detail)];
  }

  /**
   * Each relay's broker circuit: down while it is open or half-open, saying since when, why and
   * when the relay probes the broker next (an operator paged reads it here, not only in the log).
   * Liveness and readiness stay up: a broker outage is not the process's fault (a restart would
   * not end it), and emit() needs no broker, so every instance stays in its load balancer. Left
   * out when the source does not say, or is switched off.
   */
  function relayCircuits(): HealthCheck[] {
    return relays.flatMap(({ suffix, source }) => {
      if (source.state === 'disabled') return [];
      const outage = source.circuitOutage;
      if (outage === undefined) return [];
      const name = `relay circuit${suffix}`;
      return [outage === null ? up(name, 'closed') : down(name, circuitDetail(outage))];
    });
  }

  async function details(): Promise<HealthDetails> {
    const [live, ready] = await Promise.all([liveness(), readiness()]);
    const checks = [...live.checks, ...handlerSessions(), ...relayCircuits(), ...ready.checks];
    if (ready.status === 'down') return { ...report(checks), outbox: null, inbox: null };
    try {
      const outbox = await createOutboxAdmin(db).health(options.outboxThresholds);
      checks.push(
        outbox.healthy
          ? up('outbox backlog', 'within thresholds')
          : down('outbox backlog', outbox.problems.join('; ')),
      );
      const inbox = await readStats(db, null);
      checks.push(inboxBacklog(inbox, options));
      return { ...report(checks), outbox: outbox.stats, inbox };
    } catch (error) {
      // Any failure (an adapter's answer no driver gives, a bug) is a down check, as every other:
      // a health endpoint answers (describeCause never throws).
      checks.push(down('backlog', describeCause(error)));
      return { ...report(checks), outbox: null, inbox: null };
    }
  }

  return { liveness, readiness, details };
}

/**
 * `open since <time> (N ms, opened K times): broker unavailable: <error>; next probe at <time> (in
 * M ms)`; half-open, the probe is due or running since its time; `publisher closed` when every
 * outcome that opened it was the publisher's closed answer, as the relay's log line says.
 */
function circuitDetail(outage: CircuitOutage): string {
  const now = Date.now();
  const since = `since ${outage.since.toISOString()} (${now - outage.since.getTime()} ms, opened ${outage.openings} time${outage.openings === 1 ? '' : 's'})`;
  const probeAt = outage.nextProbeAt.toISOString();
  const probe =
    outage.state === 'open'
      ? `next probe at ${probeAt} (in ${Math.max(0, outage.nextProbeAt.getTime() - now)} ms)`
      : `probing the broker since ${probeAt}`;
  return `${outage.state} ${since}: ${openedBy(outage.publisherClosed)}: ${outage.error}; ${probe}`;
}

/**
 * A transport probe's answer: `ready` once its check() resolves. A check() that returns no promise
 * (a boolean, or `() => consumer.check` not called) was down with `t.check(...).then is not a
 * function`: it says what it returned and what it must return now (review 123).
 */
async function transportReady(probe: TransportProbe): Promise<string> {
  const answer: unknown = probe.check();
  if (typeof (answer as PromiseLike<unknown> | null)?.then !== 'function') {
    throw new Error(
      `check() returned ${received(answer)}, not a promise: give a check such as () => consumer.check()`,
    );
  }
  await answer;
  return 'ready';
}

/**
 * `ready`, and how many migrations the migrations table records that this version does not ship (a
 * newer ferry applied them: a rollback mid-deploy): they fail nothing (review 115), but the
 * readiness an operator reads during a rollback says the schema is ahead of the code. Counted, not
 * listed: there may be any number, and `ferry check` names them (review 123).
 */
function schemaDetail({ unrecognized }: CheckSchemaResult): string {
  if (unrecognized.length === 0) return 'ready';
  return (
    `ready; ${unrecognized.length} recorded migration(s) this version does not ship ` +
    '(applied by a newer one; `ferry check` names them)'
  );
}

function inboxBacklog(stats: Awaited<ReturnType<typeof readStats>>, options: HealthOptions): HealthCheck {
  const maxDead = options.inboxThresholds?.maxDead ?? 0;
  const maxAge = options.inboxThresholds?.maxOldestPendingAgeMs ?? 300_000;
  const problems: string[] = [];
  if (stats.counts.DEAD > maxDead) problems.push(`${stats.counts.DEAD} DEAD receipts (threshold ${maxDead})`);
  if (stats.oldestPendingAgeMs !== null && stats.oldestPendingAgeMs > maxAge) {
    problems.push(`oldest unfinished receipt is ${stats.oldestPendingAgeMs} ms old (threshold ${maxAge})`);
  }
  if (stats.expiredLeases > 0)
    problems.push(`${stats.expiredLeases} expired leases (a dead worker? see release)`);
  return problems.length === 0
    ? up('inbox backlog', 'within thresholds')
    : down('inbox backlog', problems.join('; '));
}
