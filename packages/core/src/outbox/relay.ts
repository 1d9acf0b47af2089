import { FerryError } from '../errors';
import { defaultLogger, guardLogger, type Logger } from '../observe/logger';
import { safeEmit } from '../observe/safeEmit';
import { reconnectDelayMs } from '../backoff';
import { CircuitBreaker, type CircuitOutage, type CircuitState } from './circuit';
import type { OutboxEvent } from './events';
import { resolveRelayOptions, type ResolvedOutboxOptions } from './options';
import { checkRelayConfig, type RelayConfig } from './relayConfig';
import type { ClaimedBatch } from './publishBatch';
import { RelayCycle } from './relayCycle';
import { emptyResult, type CycleResult, type Relay, type RelayState } from './relayTypes';
import { reportCircuitChange, reportInfrastructureError } from './reportCompletion';
import { UnavailableHold } from './unavailableHold';
import { settlesWithin } from './settle';
import { withStatementDeadline } from '../sql/statementDeadline';
import { relayStore, type RelayStore } from './store';
import { WakeSignal } from '../wake/wakeSignal';
import { NotifyListener } from '../wake/notifyListener';
import { withSerializationRetry } from '../sql/serializationRetry';
import { inRootContext } from '../tracing/rootContext';
import { EndedClientStop } from '../sql/endedClient';
import type { SqlExecutor } from '../sql/executor';
import { OUTBOX_TABLE, verifySchema } from '../schema/checkSchema';

/** Where the back-off after failed cycles stops doubling (or errorBackoff, when longer). */
const ERROR_BACKOFF_MAX_MS = 30_000;

export type { RelayConfig } from './relayConfig';
export type { CycleResult, Relay, RelayState } from './relayTypes';

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
  private readonly breaker: CircuitBreaker;
  /** Destinations the broker refused: a half-open probe claims from the others first. */
  private readonly hold: UnavailableHold;
  /** The steps of a cycle: claim, publish, completion. */
  private readonly steps: RelayCycle;
  /** A pipelined cycle's publish or completion failed; the loop backs off before the next claim. */
  private cycleError: { error: unknown } | undefined;
  /** Failed cycles since one last finished without an error (drives the loop's back-off). */
  private failures = 0;
  /** The poll loop's stop on a client the application ended (state 'stopped'). */
  private readonly ended: EndedClientStop;
  /** verify()'s executor: the relay's db, each statement within statementTimeout. */
  private readonly schemaDb: SqlExecutor;

  get pollIntervalMs(): number {
    return this.options.pollInterval;
  }

  constructor(given: RelayConfig) {
    const config = checkRelayConfig(given);
    this.options = resolveRelayOptions(config.options);
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
    this.schemaDb = withStatementDeadline(config.db, this.options.statementTimeout);
    this.breaker = new CircuitBreaker(this.options.circuit, config.clock);
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
    this.steps = new RelayCycle({
      store: this.store,
      options: this.options,
      publisher: config.publisher,
      logger,
      emit: this.emit,
      breaker: this.breaker,
      hold: this.hold,
      shutdown: this.hardStop.signal,
      stopping: () => this.stopping,
      claiming: () => this.wake.consume(),
    });
  }

  /** The cycle's claim step (RelayCycle), counting the cycle: recovery runs every tenth, from the first. */
  private claimStep(result: CycleResult): Promise<ClaimedBatch | undefined> {
    if (this.state === 'closed') return Promise.reject(new FerryError('FERRY_CLOSED', 'the relay is closed'));
    return this.steps.claimStep(result, this.cycles++ % 10 === 0);
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
    if (batch) await this.steps.publishAndComplete(batch, result);
    this.reportCycle(result, startedAt);
    return result;
  }

  /** The `cycle` event of a cycle that ended without an error. */
  private reportCycle(result: CycleResult, startedAt: number): void {
    const { claimed, sent, retried, failed, lost, unavailable, released } = result;
    const durationMs = performance.now() - startedAt;
    this.emit({ type: 'cycle', claimed, sent, retried, failed, lost, unavailable, released, durationMs });
  }

  get circuit(): CircuitState {
    return this.breaker.state;
  }

  get circuitOutage(): CircuitOutage | null {
    return this.breaker.outage;
  }

  get stopReason(): string | null {
    return this.state === 'stopped' ? this.ended.reason : null;
  }

  /**
   * The poll loop, pipelined: after a full claim (batchSize rows, or cut by maxBatchBytes: startCycle)
   * the next one goes out while earlier batches
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
      let full = false;
      try {
        const failed = this.cycleError; // a pipelined publish or completion failed: back off
        this.cycleError = undefined;
        if (failed) throw failed.error;
        ({ claimed, full } = await this.startCycle(inFlight));
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
      if (full) continue;
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
    // Stopped on its own (an ended client), the relay claims nothing any more, as a closed one:
    // its open circuit ends with it, or health said it probed the broker and the gauge counted it
    // for good (review 150). start() begins with a closed circuit.
    if (this.state === 'stopped') this.endCircuit();
  }

  /** An open circuit ends with the loop (closed, or stopped on its own): metrics stop counting it. */
  private endCircuit(): void {
    reportCircuitChange(this.breaker.end(), this.emit, this.logger);
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

  /**
   * Claims one batch and leaves its publish and completion in `inFlight`; returns the rows claimed
   * and whether the claim was full (ClaimedBatch.full: batchSize rows, or as many as
   * maxBatchBytes let in while more were claimable; review 144: a claim full by bytes waited for
   * every batch in flight before the next, unpipelined).
   */
  private async startCycle(inFlight: Set<Promise<void>>): Promise<{ claimed: number; full: boolean }> {
    const startedAt = performance.now();
    const result = emptyResult();
    const batch = await this.claimStep(result);
    if (!batch) {
      this.reportCycle(result, startedAt);
      return { claimed: 0, full: false };
    }
    const work: Promise<void> = this.steps
      .publishAndComplete(batch, result)
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
    return { claimed: batch.messages.length, full: batch.full };
  }

  async verify(): Promise<void> {
    const closed = (): FerryError => new FerryError('FERRY_CLOSED', 'the relay is closed');
    if (this.stopping) throw closed();
    await verifySchema(this.schemaDb, { tables: OUTBOX_TABLE, requireAllMigrations: false });
    if (this.stopping) throw closed();
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
    // Nothing claims any more: an open circuit ends with the relay.
    this.endCircuit();
    this.hold.clear();
    this.state = 'closed';
  }
}

/** Creates a relay; options are resolved (and validated) here, throwing FerryConfigError. */
export function createRelay(config: RelayConfig): Relay {
  return new OutboxRelay(config);
}
