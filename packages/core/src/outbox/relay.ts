import { randomUUID } from 'node:crypto';
import type { OutboxMessage } from '../contracts';
import { FerryError } from '../errors';
import { defaultLogger, guardLogger, type Logger } from '../observe/logger';
import { safeEmit } from '../observe/safeEmit';
import { reconnectDelayMs } from '../backoff';
import { AbandonedClaims } from './abandonedClaims';
import { CircuitBreaker, type BrokerSignal, type CircuitState } from './circuit';
import type { OutboxEvent } from './events';
import { refuseRelayMaxRetries, resolveOutboxOptions, type ResolvedOutboxOptions } from './options';
import { checkRelayConfig, type RelayConfig } from './relayConfig';
import { publishBatch, type ClaimedBatch } from './publishBatch';
import { recoverStep } from './recoverStep';
import { releaseUnavailable } from './releaseUnavailable';
import { UnavailableHold } from './unavailableHold';

/** Where the back-off after failed cycles stops doubling (or errorBackoff, when longer). */
const ERROR_BACKOFF_MAX_MS = 30_000;

import { reportCircuitChange, reportCompletion, reportInfrastructureError } from './reportCompletion';
import type { ClaimResult } from './sql/claimBatch';
import { toMessage } from './sql/fragments';
import { settlesWithin } from './settle';
import { withStatementDeadline } from '../sql/statementDeadline';
import { relayStore, type RelayStore } from './store';
import { WakeSignal } from '../wake/wakeSignal';
import { NotifyListener } from '../wake/notifyListener';
import { withSerializationRetry } from '../sql/serializationRetry';
import { inRootContext } from '../tracing/rootContext';
import { EndedClientStop, type LoopState } from '../sql/endedClient';

export type { RelayConfig } from './relayConfig';

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
}

const emptyResult = (): CycleResult => ({
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

/**
 * The relay loop: a small state machine (idle -> running -> closing -> closed) over the
 * transitions in its RelayStore. Polling always runs; LISTEN only shortens the wait.
 */
class OutboxRelay implements Relay {
  readonly options: ResolvedOutboxOptions;
  readonly listener: NotifyListener | undefined;
  state: RelayState = 'idle';
  cycles = 0;
  idle = false;
  lastCycleAt: Date | null = null;
  nextCycleDueAt: Date | null = null;
  private readonly logger: Logger;

  private readonly store: RelayStore;
  private readonly wake = new WakeSignal();
  /** Stops claiming at once (close()). */
  private stopping = false;
  /** Aborts in-flight publishes once shutdownTimeout has passed. */
  private readonly hardStop = new AbortController();
  private loop: Promise<void> | undefined;
  /** runOnce() cycles in progress; close() waits for them as for the loop. */
  private readonly active = new Set<Promise<CycleResult>>();
  private closing: Promise<void> | undefined;
  private readonly emit: (event: OutboxEvent) => void;
  /** Round-robin position of the claim's key scan (see claimBatch). */
  private laneCursor: string | null = null;
  /** The next claim starts with the key scan (see claimBatch). */
  private keyScanFirst = false;
  private readonly breaker: CircuitBreaker;
  /** Destinations the broker refused: a half-open probe claims from the others first. */
  private readonly hold: UnavailableHold;
  /** Where the next half-open probe's round-robin visit of destinations starts (probeClaim). */
  private probeCursor: string | null = null;
  /** Where the next half-open probe's key scan starts (probeClaim). */
  private probeKeyCursor: string | null = null;
  /** Claims dropped while PostgreSQL may still hold rows under their tokens. */
  private readonly abandoned: AbandonedClaims;
  /** A pipelined cycle's publish or completion failed; the loop backs off before the next claim. */
  private cycleError: { error: unknown } | undefined;
  /** Failed cycles since one last finished without an error (drives the loop's back-off). */
  private failures = 0;
  /** The poll loop's stop on a client the application ended (state 'stopped'). */
  private readonly ended: EndedClientStop;

  get pollIntervalMs(): number {
    return this.options.pollInterval;
  }

  constructor(private readonly config: RelayConfig) {
    checkRelayConfig(config);
    this.options = resolveOutboxOptions(config.options);
    refuseRelayMaxRetries(config.options);
    const logger = guardLogger(config.logger ?? defaultLogger('ferry.outbox.relay'));
    this.logger = logger;
    this.ended = new EndedClientStop(logger, 'ferry outbox relay', 'relay');
    for (const warning of this.options.warnings) logger.warn({ option: 'stuckThreshold' }, warning);
    this.store =
      config.store ??
      relayStore(
        withStatementDeadline(
          withSerializationRetry(config.db, this.options.statementTimeout),
          this.options.statementTimeout,
        ),
        this.options.redact,
        logger,
      );
    this.breaker = new CircuitBreaker(this.options.circuit, config.clock);
    this.abandoned = new AbandonedClaims(logger, Math.max(1, Math.floor(this.options.statementTimeout / 2)));
    const observer = config.observer;
    this.emit = (event) => safeEmit(observer, event, logger);
    this.hold = new UnavailableHold(this.breaker, (transition) =>
      reportCircuitChange(transition, this.emit, logger),
    );
    this.listener = config.listenUrl
      ? new NotifyListener({
          connectionString: config.listenUrl,
          channel: this.options.channel,
          ...this.options.listen,
          onNotify: () => this.wake.notify(),
          logger,
        })
      : undefined;
  }

  /**
   * One cycle outside the poll loop; close() waits for it as for the loop's. Throws
   * FERRY_CLOSED once close() was called.
   */
  runOnce(): Promise<CycleResult> {
    if (this.stopping) return Promise.reject(new FerryError('FERRY_CLOSED', 'the relay is closed'));
    const cycle = this.cycle();
    this.active.add(cycle);
    const forget = (): void => void this.active.delete(cycle);
    cycle.then(forget, forget);
    return cycle;
  }

  private async cycle(): Promise<CycleResult> {
    const startedAt = performance.now();
    const result = emptyResult();
    const batch = await this.claimStep(result);
    if (batch) await this.publishAndComplete(batch, result);
    this.reportCycle(result, startedAt);
    return result;
  }

  /** The `cycle` event of a cycle that ended without an error. */
  private reportCycle(result: CycleResult, startedAt: number): void {
    const { claimed, sent, retried, failed, lost, unavailable, released } = result;
    const durationMs = performance.now() - startedAt;
    this.emit({ type: 'cycle', claimed, sent, retried, failed, lost, unavailable, released, durationMs });
  }

  /**
   * The rows of claims dropped earlier handed back (abandonedClaims.ts; before recovery, which
   * would count them), recovery (every tenth cycle), then the claim; returns the batch to publish.
   */
  private async claimStep(result: CycleResult): Promise<ClaimedBatch | undefined> {
    if (this.state === 'closed') throw new FerryError('FERRY_CLOSED', 'the relay is closed');
    const recovering = this.cycles++ % 10 === 0;
    if (this.abandoned.pending) await this.abandoned.settle(this.store, recovering);
    if (recovering) await recoverStep(this.store, this.options, this.emit, this.logger, result);
    const limit = this.breaker.claimLimit(this.options.batchSize);
    if (this.stopping || limit === 0) return undefined;
    const token = randomUUID();
    this.wake.consume();
    const circuitEpoch = this.breaker.epoch;
    const claimedAt = performance.now();
    const claim = await this.claim(token, limit);
    this.laneCursor = claim.laneCursor ?? null;
    this.keyScanFirst = claim.keyScanFirst ?? false;
    if (claim.rows.length === 0) return undefined;
    const messages = claim.rows.map(toMessage);
    result.claimed = messages.length;
    this.emit({
      type: 'claimed',
      claimToken: token,
      ids: messages.map((m) => m.id),
      types: messages.map((m) => m.type),
    });
    if (claim.skippedIds.length > 0) {
      this.logger.warn({ ids: claim.skippedIds }, 'ordering: published past FAILED events');
      this.emit({ type: 'ordering-skipped', skippedIds: claim.skippedIds });
    }
    if (!this.stopping) return { token, messages, claimedAt, circuitEpoch };
    result.released = await this.dropOnFailure(token, false, () =>
      this.store.release(
        token,
        messages.map((m) => m.id),
      ),
    );
    return undefined;
  }

  /**
   * The claim statement(s) under `token`; a claim that fails is dropped (abandonedClaims.ts).
   * Half-open, with destinations the broker refused, the probe claims from the others first, then
   * from one refused destination in turn (unavailableHold.ts, sql/probeClaim.ts); the claim proper
   * only when neither found a claimable due row.
   */
  private async claim(token: string, limit: number): Promise<ClaimResult> {
    const claiming = this.abandoned.claiming(token);
    try {
      const refused = this.breaker.state === 'half-open' ? this.hold.destinations() : [];
      if (refused.length > 0) {
        const probe = await this.store.probe({
          token,
          limit,
          leaseMs: this.options.lease.duration,
          failedHead: this.options.ordering.failedHead,
          refused,
          cursor: this.probeCursor,
          keyCursor: this.probeKeyCursor,
          statement: claiming.statement,
        });
        this.probeCursor = probe.cursor;
        this.probeKeyCursor = probe.keyCursor;
        const { laneCursor, keyScanFirst } = this;
        if (probe.rows.length > 0)
          return { rows: probe.rows, skippedIds: probe.skippedIds, laneCursor, keyScanFirst };
      }
      return await this.store.claim({
        token,
        limit,
        leaseMs: this.options.lease.duration,
        failedHead: this.options.ordering.failedHead,
        laneCursor: this.laneCursor,
        keyScanFirst: this.keyScanFirst,
        statement: claiming.statement,
      });
    } catch (error) {
      claiming.failed(error);
      throw error;
    }
  }

  /** Runs a statement on a claim's rows; if it fails, the relay drops the claim and hands its rows back. */
  private async dropOnFailure<T>(token: string, published: boolean, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      this.abandoned.drop(token, published);
      throw error;
    }
  }

  private async publishAndComplete(batch: ClaimedBatch, result: CycleResult): Promise<void> {
    const { store, options, logger } = this;
    const { token, messages } = batch;
    const published = await publishBatch({
      store,
      publisher: this.config.publisher,
      token,
      messages,
      options,
      shutdown: this.hardStop.signal,
      claimedAt: batch.claimedAt,
      onRenewError: (error) =>
        reportInfrastructureError(
          { error, fallback: 'renew lease', redact: options.redact, emit: this.emit, logger },
          { level: 'warn', message: 'outbox lease renewal failed', fields: { claimToken: token } },
        ),
    });
    if (published.kind === 'lost') {
      result.lost = messages.length;
      logger.warn({ claimToken: token, reason: published.reason }, 'lease lost; outcomes discarded');
      const ids = messages.map((m) => m.id);
      this.emit({ type: 'lease-lost', claimToken: token, ids, reason: published.reason });
      if (published.byShutdown) await this.yieldAtClose(token, ids);
      return;
    }
    // The breaker hears the cycle before its unavailable rows go back (unavailableHold.ts).
    const told = (
      signal: BrokerSignal,
      unavailable: readonly OutboxMessage[],
      answered: readonly OutboxMessage[],
    ): void => this.hold.told(signal, batch.circuitEpoch, unavailable, answered);
    const { rest, completed } = await this.dropOnFailure(token, true, async () => {
      const rest = await releaseUnavailable(store, token, messages, published.completions, told);
      return { rest, completed: await store.complete(token, rest.completions, options.onSent) };
    });
    result.unavailable = rest.released;
    reportCompletion({
      token,
      messages: rest.messages,
      completions: rest.completions,
      completed,
      result,
      emit: this.emit,
      logger,
    });
  }

  /**
   * close() stopped waiting for the publish of this claim: its rows are given up without a
   * poison-guard strike, held until their lease would have ended (sql/yieldClaims.ts). If that
   * fails, lease recovery takes them (and counts the claim, as for a crash).
   */
  private async yieldAtClose(token: string, ids: readonly string[]): Promise<void> {
    try {
      await this.store.yieldClaims(token, ids);
    } catch (error) {
      this.logger.warn(
        { err: error, claimToken: token },
        'could not give up a claim at shutdown; its rows are left to lease recovery',
      );
    }
  }

  get circuit(): CircuitState {
    return this.breaker.state;
  }

  get stopReason(): string | null {
    return this.state === 'stopped' ? this.ended.reason : null;
  }

  /**
   * The poll loop, pipelined: after a full claim the next one goes out while earlier batches
   * publish and complete (at most `pipelineDepth` in flight; one unless the circuit is closed).
   * After a short claim it waits for them, then claims again if any row came back (other relays
   * may hold the rest of a backlog); only an empty claim idles (wake-ups meanwhile coalesce).
   * A failure on a client the application ended ends the loop ('stopped': stopOnEndedClient).
   */
  private async run(): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    while (!this.stopping && this.state === 'running') {
      const depth = this.breaker.state === 'closed' ? this.options.pipelineDepth : 1;
      if (inFlight.size >= depth) {
        await Promise.race(inFlight);
        continue;
      }
      let claimed = 0;
      try {
        const failed = this.cycleError; // a pipelined publish or completion failed: back off
        this.cycleError = undefined;
        if (failed) throw failed.error;
        claimed = await this.startCycle(inFlight);
        // A cycle that claimed rows has finished only once they are completed (startCycle).
        if (claimed === 0) this.cycleSucceeded();
      } catch (error) {
        // Doubling to 30 s, or from an errorBackoff set longer than that, that long (not cut to 30 s).
        const { errorBackoff } = this.options;
        const delay = reconnectDelayMs(
          errorBackoff,
          Math.max(ERROR_BACKOFF_MAX_MS, errorBackoff),
          this.failures,
        );
        this.failures += 1;
        if (this.stopOnEndedClient(error)) break;
        this.reportFailure(error, delay);
        await this.wake.pause(delay);
        continue;
      }
      if (claimed >= this.options.batchSize) continue;
      await Promise.all(inFlight);
      if (claimed > 0) continue;
      this.idle = true;
      const wait = this.breaker.remainingOpenMs() || this.options.pollInterval;
      this.nextCycleDueAt = new Date(Date.now() + wait);
      await this.wake.wait(wait);
      this.nextCycleDueAt = null;
      this.idle = false;
    }
    await Promise.all(inFlight);
    // A failure the loop did not get round to (close() came first) is still reported, once.
    const failed = this.cycleError;
    this.cycleError = undefined;
    if (failed) this.reportFailure(failed.error);
  }

  /**
   * A cycle that failed with FERRY_CLOSED: the application ended the pool or client the relay runs
   * on, which never opens a session again. Claiming on, the loop reported the same error at every
   * back-off (up to 30 s) for ever while its state said running (review 88, as the inbox worker's
   * in review 87; EndedClientStop is the one home of both). The failure is reported once, the
   * state is 'stopped' with `stopReason` (createHealth's liveness reports it down with it), and
   * the loop ends once its batches in flight settled; close() closes it at once, start() starts it
   * again. A database that is unavailable is not this: the loop backs off and claims again.
   */
  private stopOnEndedClient(error: unknown): boolean {
    if (this.stopping || this.state !== 'running' || !this.ended.stops(error)) return false;
    this.state = 'stopped';
    this.reportFailure(error);
    return true;
  }

  /** A cycle finished without an error: liveness, and the back-off starts over. */
  private cycleSucceeded(): void {
    this.failures = 0;
    this.lastCycleAt = new Date();
  }

  /** The log line and `infrastructure-error` event of a failed cycle. */
  private reportFailure(error: unknown, delayMs?: number): void {
    const { emit, logger } = this;
    reportInfrastructureError(
      { error, fallback: 'cycle', redact: this.options.redact, emit, logger },
      { level: 'error', message: 'outbox relay cycle failed', fields: { delayMs } },
    );
  }

  /** Claims one batch and leaves its publish and completion in `inFlight`; returns the rows claimed. */
  private async startCycle(inFlight: Set<Promise<void>>): Promise<number> {
    const startedAt = performance.now();
    const result = emptyResult();
    const batch = await this.claimStep(result);
    if (!batch) {
      this.reportCycle(result, startedAt);
      return 0;
    }
    const work: Promise<void> = this.publishAndComplete(batch, result)
      .then(
        () => {
          this.cycleSucceeded();
          this.reportCycle(result, startedAt);
        },
        (error: unknown) => {
          // The loop reports the first failure and backs off; one more meanwhile is reported here.
          if (this.cycleError) this.reportFailure(error);
          else this.cycleError = { error };
        },
      )
      .finally(() => inFlight.delete(work));
    inFlight.add(work);
    return batch.messages.length;
  }

  start(): void {
    if (this.stopping) throw new FerryError('FERRY_CLOSED', 'the relay is closed');
    if (this.state !== 'idle' && this.state !== 'stopped') return;
    this.state = 'running';
    this.ended.clear();
    // A stopped loop may still wait for its batches in flight: the new one starts after it (one
    // loop at a time), and close() waits for both through `loop`.
    const previous = this.loop;
    // Outside the caller's span (a traced start-up): the loop's statements, publishes and events
    // never join its trace (review 71).
    inRootContext(() => {
      this.listener?.start();
      this.loop = previous === undefined ? this.run() : previous.then(() => this.run());
    });
  }

  close(): Promise<void> {
    this.closing ??= this.drain();
    return this.closing;
  }

  /**
   * Stops claiming and waits up to shutdownTimeout for the cycle in flight. Past that, the
   * publish is aborted (its outcome discarded, its claim given up held until its lease ends, no
   * poison-guard strike: sql/yieldClaims.ts) and close()
   * still waits for the statement in flight (claim, completion, recovery) to settle, for at
   * most lease.duration: it never resolves while a query it knows to be settling still runs.
   * A statement still hanging after that is abandoned; whatever it does later is fenced.
   */
  private async drain(): Promise<void> {
    this.state = 'closing';
    this.stopping = true;
    this.wake.close();
    // Bounded (a LISTEN connection that went silent is destroyed); runs beside the drain.
    const listening = this.listener?.close();
    const work = Promise.allSettled([this.loop, ...this.active]);
    if (!(await settlesWithin(work, this.options.shutdownTimeout))) {
      this.hardStop.abort(new FerryError('FERRY_TIMEOUT', 'shutdown timeout'));
      this.logger.warn(
        'outbox relay shutdown timed out; unfinished claims are given up until their lease ends',
      );
      if (!(await settlesWithin(work, this.options.lease.duration)))
        this.logger.error('outbox relay statement still running lease.duration after shutdown; abandoned');
    }
    await listening;
    // Nothing claims any more: an open circuit ends with the relay (metrics stop counting it).
    reportCircuitChange(this.breaker.end(), this.emit, this.logger);
    this.hold.clear();
    this.state = 'closed';
  }
}

/** Creates a relay; options are resolved (and validated) here, throwing FerryConfigError. */
export function createRelay(config: RelayConfig): Relay {
  return new OutboxRelay(config);
}
