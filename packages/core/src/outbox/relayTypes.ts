import type { LoopState } from '../sql/endedClient';
import type { NotifyListener } from '../wake/notifyListener';
import type { CircuitOutage, CircuitState } from './circuit';
import type { ResolvedOutboxOptions } from './options';

export interface CycleResult {
  claimed: number;
  sent: number;
  retried: number;
  failed: number;
  /** Rows whose outcome was discarded because the claim was lost. */
  lost: number;
  /** Claimed rows handed back unpublished because the relay was closing. */
  released: number;
  /** Claimed rows handed back without spending an attempt: the publisher said the broker was unavailable. */
  unavailable: number;
  recovered: number;
  poisoned: number;
}

/**
 * 'idle' until started, 'running', 'closing' and 'closed' from close(); 'stopped' when the poll
 * loop ended on its own because the pool or client it runs on was ended (FERRY_CLOSED: no claim
 * can succeed again; `stopReason` says so, createHealth's liveness reports it down). close()
 * closes a stopped relay as ever; start() starts it again.
 */
export type RelayState = LoopState;

export interface Relay {
  /**
   * One cycle: recovery (every tenth cycle, starting with the first), claim, publish, complete.
   * close() waits for it; throws FERRY_CLOSED once close() was called.
   */
  runOnce(): Promise<CycleResult>;
  /**
   * Starts the poll loop, pipelined up to options.pipelineDepth (and LISTEN when listenUrl is set).
   * Idempotent; starts a stopped relay again; throws FERRY_CLOSED once close() was called.
   */
  start(): void;
  /**
   * Checks, starting nothing, that the outbox table has the columns the relay uses: a
   * FerrySchemaError (FERRY_SCHEMA_NOT_READY) listing what is missing, as the inbox's verify().
   * The loop on an unmigrated database reports that error at every back-off until it is migrated;
   * call this before start() to refuse at once instead (@ferry/nestjs does at module init).
   * Each statement within options.statementTimeout; FERRY_CLOSED once close() was called.
   */
  verify(): Promise<void>;
  /**
   * Stops claiming, drains in-flight publishes (the loop's and runOnce()'s) up to shutdownTimeout,
   * releases unstarted claims. Idempotent.
   */
  close(): Promise<void>;
  readonly state: RelayState;
  /** Why the poll loop stopped on its own (state 'stopped': its database client ended), else null. */
  readonly stopReason: string | null;
  /** Cycles run so far. */
  readonly cycles: number;
  /** True while the loop waits for the next poll (or a wake-up). */
  readonly idle: boolean;
  /** When the poll loop last finished a cycle without an error (createHealth's liveness). */
  readonly lastCycleAt: Date | null;
  /** options.pollInterval: an idle loop's wait between cycles (createHealth's liveness allows it). */
  readonly pollIntervalMs: number;
  /**
   * While the idle loop waits: when its next cycle is due (one poll interval, or the rest of an
   * open circuit's period, however long); null otherwise. createHealth's liveness counts
   * maxCycleAgeMs from it, so a relay waiting out its circuit on schedule is live (review 38).
   */
  readonly nextCycleDueAt: Date | null;
  readonly options: ResolvedOutboxOptions;
  readonly listener: NotifyListener | undefined;
  /** The broker-outage circuit: 'open' while claiming is paused. */
  readonly circuit: CircuitState;
  /**
   * The open (or half-open) circuit: since when, the error that opened it (last), whether the
   * publisher was closed, the openings so far and when the relay probes the broker next; null while
   * closed. createHealth's details: the `relay circuit` check.
   */
  readonly circuitOutage: CircuitOutage | null;
}

export const emptyResult = (): CycleResult => ({
  claimed: 0,
  sent: 0,
  retried: 0,
  failed: 0,
  lost: 0,
  released: 0,
  unavailable: 0,
  recovered: 0,
  poisoned: 0,
});
