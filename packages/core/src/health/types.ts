import type { InboxStats } from '../inbox/sql/stats';
import type { InboxClaimCycling, InboxSessionOutage } from '../inbox/sessionOutage';
import type { HealthThresholds, OutboxStats } from '../outbox/adminTypes';
import type { CircuitOutage } from '../outbox/circuit';
import type { SqlExecutor } from '../sql/executor';

/** A loop whose liveness is its last successful cycle: the relay, or the Inbox (its worker). */
export interface LoopSource {
  /** When the loop last finished a cycle without an error; null before the first. */
  readonly lastCycleAt: Date | null;
  /**
   * relay.state / inbox.state: 'closing', 'closed' and 'stopped' are not alive, nor 'not started' (a source
   * that knows its loop was not started yet, e.g. @ferry/nestjs's InboxService before app.init()).
   * 'disabled': the loop is switched off by configuration (@ferry/nestjs's InboxService with
   * `worker.enabled: false`, until started by hand): left out of liveness, as a source not passed.
   */
  readonly state?: string;
  /**
   * Why the loop stopped on its own (inbox.stopReason: state 'stopped', its database client
   * ended), shown in the liveness check that reports it down; null or absent otherwise.
   */
  readonly stopReason?: string | null;
  /**
   * The wait of an idle loop between two cycles (relay: `pollInterval`, inbox:
   * `worker.pollIntervalMs`). Liveness allows it on top of maxCycleAgeMs: an idle loop that polls
   * on schedule is alive however long its interval.
   */
  readonly pollIntervalMs?: number;
  /**
   * While the loop waits: when its next cycle is due, if later than one poll interval after the
   * last (a relay waiting out an open circuit: `relay.nextCycleDueAt`). Liveness counts
   * maxCycleAgeMs from the later of the two.
   */
  readonly nextCycleDueAt?: Date | null;
  /**
   * The inbox worker's outage of the application's pool (inbox.sessionOutage: its handler
   * transactions got no session since `since`), null when there is none. Given (null or not), details
   * add an `inbox handler transactions` check (`... "<name>"` for an `inboxes` entry), down once the
   * outage has lasted longer than maxCycleAgeMs; liveness and readiness do not read it.
   */
  readonly sessionOutage?: InboxSessionOutage | null;
  /**
   * The inbox worker's claims that cycle (inbox.claimCycling: given back for leases lost before
   * their handler, no handler transaction begun since `since`), null when there are none. Given
   * (null or not), the `inbox handler transactions` check is down too once claims have been given
   * back so over longer than maxCycleAgeMs (`since` to `lastAt`: one give-back is no cycle);
   * liveness and readiness do not read it.
   */
  readonly claimCycling?: InboxClaimCycling | null;
  /**
   * The relay's open (or half-open) circuit (relay.circuitOutage), null while it is closed. Given
   * (null or not), details add a `relay circuit` check (`... "<name>"` for a `relays` entry), down
   * while the circuit is not closed; liveness and readiness do not read it.
   */
  readonly circuitOutage?: CircuitOutage | null;
}

/**
 * A broker connection: `check` resolves while it is usable, e.g. `() => consumer.check()` (every
 * ferry consumer's readiness probe; not `ready()`, which resolves once, at the first attach).
 */
export interface TransportProbe {
  readonly name: string;
  check(): Promise<unknown>;
}

export interface InboxThresholds {
  /** Default 0: any DEAD receipt is reported. */
  readonly maxDead?: number;
  /** Default 300,000 ms. */
  readonly maxOldestPendingAgeMs?: number;
}

export interface HealthOptions {
  readonly db: SqlExecutor;
  /** The relay (checks `relay`, `relay circuit`). */
  readonly relay?: LoopSource;
  /** The Inbox (checks `inbox worker`, `inbox handler transactions`). */
  readonly inbox?: LoopSource;
  /**
   * Several relays by a name of the application's (one per destination broker), beside or in
   * place of `relay`: each gets the relay's checks named with its name quoted as JSON writes it,
   * `relay "kafka"`, `relay circuit "kafka"`. One source is given once.
   */
  readonly relays?: Readonly<Record<string, LoopSource>>;
  /** Several Inbox instances by name, as `relays`: `inbox worker "billing"`, `inbox handler transactions "billing"`. */
  readonly inboxes?: Readonly<Record<string, LoopSource>>;
  readonly transports?: readonly TransportProbe[];
  /** A running loop must have finished a cycle within this. Default 60,000 ms (above the relay's 30 s error backoff cap). */
  readonly maxCycleAgeMs?: number;
  /**
   * Deadline of each readiness probe (database, schema, transport), and of each statement health
   * sends (details' backlog reads too): one that misses it is given up, on fromPg with its
   * connection. Default 5,000 ms.
   */
  readonly checkTimeoutMs?: number;
  /** Readiness checks ferry's schema (tables and migrations). Default true. */
  readonly checkSchema?: boolean;
  /** Backlog thresholds for details(). */
  readonly outboxThresholds?: HealthThresholds;
  readonly inboxThresholds?: InboxThresholds;
}

export interface HealthCheck {
  readonly name: string;
  readonly status: 'up' | 'down';
  /** Why, for operators: an age, an error code and message, a count over its threshold. */
  readonly detail: string;
}

export interface HealthReport {
  readonly status: 'up' | 'down';
  readonly checks: readonly HealthCheck[];
}

export interface HealthDetails extends HealthReport {
  /** Operator-scope outbox counts (every tenant). */
  readonly outbox: OutboxStats | null;
  /** Inbox counts over every scope. */
  readonly inbox: InboxStats | null;
}

export interface FerryHealth {
  /** The loops only (no database): each finished a cycle within maxCycleAgeMs. For liveness probes. */
  liveness(): Promise<HealthReport>;
  /** Database reachable, schema in place, every transport probe resolved. For readiness probes. */
  readiness(): Promise<HealthReport>;
  /**
   * Liveness + readiness + backlog (FAILED, DEAD, oldest pending ages) against thresholds, the
   * inbox worker's outage of the application's pool (LoopSource.sessionOutage) and the relay's open
   * circuit (LoopSource.circuitOutage).
   */
  details(): Promise<HealthDetails>;
}
