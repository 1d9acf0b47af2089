import { reconnectDelayMs } from '../backoff';
import { FerryError } from '../errors';
import { defaultLogger } from '../observe/logger';
import type { NotifyListener } from '../wake/notifyListener';
import { WakeSignal } from '../wake/wakeSignal';
import { ClaimQueue, type QueuedClaim } from './claimQueue';
import { concurrencyLimit, type Limit } from './concurrencyLimit';
import { emit, emitInfrastructure, processReceipt, type ProcessDeps, type ProcessOutcome } from './process';
import { inboxListener } from './wakeup';
import { EXHAUSTED_ERROR } from './sql/exhaustExpired';
import { inRootContext } from '../tracing/rootContext';
import { EndedClientStop, type LoopState } from '../sql/endedClient';
import type { InboxClaimCycling, InboxSessionOutage } from './sessionOutage';

export interface RunOnceResult {
  readonly claimed: number;
  readonly completed: number;
  readonly retried: number;
  readonly dead: number;
  readonly leaseLost: number;
  /**
   * Claims left to their lease: a failure transition that could not be written, or work
   * abandoned when close() ran out of shutdownTimeoutMs; also what a claim in flight then claimed,
   * given back unrun (its attempt returned) before close() returns.
   */
  readonly unresolved: number;
}

/**
 * 'stopped': the poll loop ended on its own, its database client ended (FERRY_CLOSED: see
 * EndedClientStop); close() still closes it, start() starts it again.
 */
type State = LoopState;

const COUNTERS: Record<ProcessOutcome, keyof Omit<RunOnceResult, 'claimed'>> = {
  completed: 'completed',
  retry: 'retried',
  dead: 'dead',
  lease_lost: 'leaseLost',
  unresolved: 'unresolved',
};

const SWEEP_EVERY_CLAIMS = 10;

/** The back-off after a failed claim: 1 s, doubling per failure in a row, up to 30 s (and the poll interval). */
const CLAIM_BACKOFF_MS = 1_000;
const CLAIM_BACKOFF_MAX_MS = 30_000;

/**
 * The inbox worker: a small state machine (idle → running → closing → closed). The poll
 * loop claims up to its free lanes plus worker.prefetch in one statement into a local queue
 * (ClaimQueue: one renewed lease per claimed batch), starts queued receipts as lanes free up
 * (processReceipt under its concurrency limit), and claims again once the queue is down to its
 * refill mark (see wanted()). When a claim found less than it asked for, it waits
 * pollIntervalMs, or less when acceptance notifies (worker.listenUrl). close() gives back
 * queued, unstarted claims.
 */

export class InboxWorker<TTx> {
  private state: State = 'idle';
  private readonly limit: Limit;
  private readonly inflight = new Set<Promise<ProcessOutcome>>();
  /** Lanes held for the receipts of runOnce() claims in flight (see runBatch). */
  private reserved = 0;
  /** runOnce() calls in progress (claim and handlers). */
  private readonly active = new Set<Promise<unknown>>();
  /** runOnce() claims in flight, with the release of what one claims once close() gave up waiting. */
  private readonly claiming = new Set<Promise<unknown>>();
  private readonly shutdown = new AbortController();
  private loop: Promise<void> | undefined;
  private readonly wake = new WakeSignal();
  private readonly queue: ClaimQueue<TTx>;
  /** LISTEN connection (worker.listenUrl); it only shortens the poll wait. */
  readonly listener: NotifyListener | undefined;
  /**
   * Claim again as soon as the queue is down to its refill mark: the last claim of the poll loop
   * filled what it asked for, or a wake-up came while the queue was above the mark (waitForWork).
   */
  private backlog = false;
  private closing: Promise<void> | undefined;
  /** Claims since expired, exhausted claims were last swept to DEAD (see claimBatch). */
  private claimsSinceSweep = 0;
  /** Claims failed in a row (the back-off after a failed claim); a claim that works resets it. */
  private claimFailures = 0;
  /** When the poll loop last claimed without an error (createHealth's liveness). */
  lastCycleAt: Date | null = null;
  /** The poll loop's stop on a client the application ended (state 'stopped'). */
  private readonly ended: EndedClientStop;

  private readonly deps: ProcessDeps<TTx>;

  constructor(deps: ProcessDeps<TTx>) {
    // A handler transaction on a pool the application ended stops the loop as its claim's would.
    this.deps = { ...deps, onEndedClient: (error) => this.stopOnEndedClient(error) };
    this.limit = concurrencyLimit(deps.worker.concurrency);
    this.ended = new EndedClientStop(
      deps.logger ?? defaultLogger('ferry.inbox'),
      'ferry inbox worker',
      'inbox',
    );
    this.queue = new ClaimQueue(this.deps);
    const { listenUrl } = deps.worker;
    this.listener =
      listenUrl === undefined
        ? undefined
        : inboxListener(listenUrl, () => this.wake.notify(), deps.logger ?? defaultLogger('ferry.inbox'));
  }

  get running(): boolean {
    return this.state === 'running';
  }

  get lifecycle(): State {
    return this.state;
  }

  /** Why the poll loop stopped on its own (state 'stopped'), else null. */
  get stopReason(): string | null {
    return this.state === 'stopped' ? this.ended.reason : null;
  }

  /** The outage of the application's pool its handler transactions saw (SessionOutage), if any. */
  get sessionOutage(): InboxSessionOutage | null {
    return this.deps.outage.current;
  }

  /** Its claims given back for leases lost before their handler since one last began (SessionOutage). */
  get claimCycling(): InboxClaimCycling | null {
    return this.deps.outage.cycling;
  }

  /** Starts polling. Safe to call twice. */
  start(): void {
    this.assertOpen();
    if (this.state === 'running') return;
    this.state = 'running';
    this.ended.clear();
    // Outside the caller's span (a traced start-up): the loop's statements and events never join
    // its trace; each handler runs in its own process span (review 71).
    inRootContext(() => {
      this.listener?.start();
      this.loop = this.poll();
    });
  }

  /**
   * Claims one batch (up to the free concurrency), processes it and waits for it. close()
   * waits for a runOnce() in progress; if the shutdown timeout passes first, what it claims
   * afterwards is not processed but given back before close() returns (counted `unresolved`).
   */
  async runOnce(): Promise<RunOnceResult> {
    this.assertOpen();
    return this.track(this.runBatch());
  }

  /**
   * Claims only lanes no one else holds, reserved before the claim is sent: the claimed receipts
   * start at once, under their own renewed lease (processReceipt). A claim sized on lanes that
   * another runOnce() or the poll loop then took left its receipts waiting for a lane with no
   * lease renewal: they expired unrun, and with no attempt left were swept DEAD (review 83).
   */
  private async runBatch(): Promise<RunOnceResult> {
    const lanes = this.free();
    this.reserved += lanes;
    let claimed: QueuedClaim[] = [];
    let givenBack = 0;
    let running: Array<Promise<ProcessOutcome>> = [];
    try {
      const claim = this.claimLanes(lanes);
      this.claiming.add(claim);
      const forget = (): void => void this.claiming.delete(claim);
      claim.then(forget, forget);
      ({ claimed, givenBack } = await claim);
    } finally {
      // Given back in the same turn as the claimed receipts take them. The lanes the claim did
      // not fill (it found less, or failed) start what the poll loop queued meanwhile: nothing
      // else would while no handler runs, and the queued receipts waited, renewed, for ever.
      this.reserved -= lanes;
      running = claimed.map((claim) => this.dispatch(claim));
      this.pump();
    }
    const outcomes = await Promise.all(running);
    const result = {
      claimed: claimed.length + givenBack,
      completed: 0,
      retried: 0,
      dead: 0,
      leaseLost: 0,
      unresolved: givenBack,
    };
    for (const outcome of outcomes) result[COUNTERS[outcome]] += 1;
    return result;
  }

  /**
   * runOnce()'s claim of up to `lanes` receipts. When it returns after close() gave up waiting
   * (shutdownTimeoutMs passed while the statement was in flight), its receipts are not run but
   * given back at once (their attempt returned), as the poll loop's queue is, and close() waits for
   * that: left to their lease, they had spent an attempt no handler used, the cycle's last made
   * them DEAD (review 87).
   */
  private async claimLanes(lanes: number): Promise<{ claimed: QueuedClaim[]; givenBack: number }> {
    const claimedAt = performance.now();
    const receipts = await this.claimBatch(true, lanes);
    if (!this.shutdown.signal.aborted) {
      return { claimed: receipts.map((receipt) => ({ receipt, claimedAt })), givenBack: 0 };
    }
    if (receipts.length > 0) {
      try {
        await this.deps.ops.release(receipts);
      } catch (error) {
        emitInfrastructure(this.deps, 'release', error);
      }
    }
    return { claimed: [], givenBack: receipts.length };
  }

  /**
   * Stops claiming and waits, up to shutdownTimeoutMs in all, until no query or handler of
   * this worker runs: the poll loop, runOnce() calls in progress and their handlers. Then it
   * aborts the signals of what still runs; that work is abandoned to its lease (see
   * docs/inbox.md, "Shutdown"), but a receipt whose handler had not started gives its claim back. It returns once the poll loop has ended, which gives back the
   * queued, unstarted claims: the loop's last statements (a claim in flight, the release), and a
   * runOnce() claim in flight with the release of what it claimed, each have their statement deadline (statementTimeoutMs), so close() may take that much longer than
   * shutdownTimeoutMs when the database does not answer. Safe to call twice.
   */
  close(): Promise<void> {
    this.closing ??= this.drain();
    return this.closing;
  }

  private async drain(): Promise<void> {
    this.state = 'closing';
    this.wake.close();
    const listening = this.listener?.close();
    const drained = await settledWithin(
      () => [this.loop, ...this.active, ...this.inflight],
      this.deps.worker.shutdownTimeoutMs,
    );
    this.state = 'closed';
    if (!drained) {
      this.deps.logger?.warn(
        { active: this.inflight.size + this.active.size },
        'ferry inbox shutdown timed out; interrupting handlers and leaving their claims to the lease',
      );
      this.shutdown.abort(new FerryError('FERRY_CLOSED', 'the inbox worker shut down'));
      // A runOnce() claim still in flight, then the release of what it claimed (claimLanes): each
      // statement has its deadline, as the poll loop's last ones.
      await Promise.allSettled([...this.claiming]);
      // Interrupted receipts whose handler had not started give their claim back (processReceipt;
      // each statement has its deadline), and what a late claim dispatched meanwhile does.
      await Promise.allSettled([...this.inflight]);
    }
    // Bounded (a LISTEN connection that went silent is destroyed), and never before the abort.
    await listening;
    // The poll loop never rejects (its failures are reported); it ends with the release.
    await this.loop;
  }

  /** Keeps `work` in the set close() waits for until it settles. */
  private track<T>(work: Promise<T>): Promise<T> {
    this.active.add(work);
    const forget = (): void => void this.active.delete(work);
    work.then(forget, forget);
    return work;
  }

  private assertOpen(): void {
    if (this.state === 'closing' || this.state === 'closed') {
      throw new FerryError('FERRY_CLOSED', 'the inbox worker is closed');
    }
  }

  /** Claims up to `limit` receipts; runOnce() sweeps exhausted claims first (see sweepDue). */
  private async claimBatch(sweep: boolean, limit: number) {
    if (limit <= 0) return [];
    if (sweep) await this.sweepExhausted();
    this.claimsSinceSweep += 1;
    return this.deps.ops.claim(limit);
  }

  /**
   * The sweep that turns expired claims with no attempts left into DEAD costs a query, so a
   * busy poll loop runs it every tenth claim (and after every idle poll) instead of with each
   * claim. The poll loop runs it after the claim's receipts have started: the rows it sweeps
   * are ones no claim can take (no attempt left), so the order does not matter to the claim,
   * and a worker woken by an acceptance starts the handler one round trip sooner.
   */
  private sweepDue(idle: boolean): boolean {
    return idle || this.claimsSinceSweep >= SWEEP_EVERY_CLAIMS;
  }

  /** The poll loop's sweep; a failure is reported as the claim's was (the loop goes on). */
  private async sweepAfterClaim(): Promise<void> {
    try {
      await this.sweepExhausted();
    } catch (error) {
      emitInfrastructure(this.deps, 'claim', error);
      this.stopOnEndedClient(error);
    }
  }

  private async sweepExhausted(): Promise<void> {
    this.claimsSinceSweep = 0;
    const exhausted = await this.deps.ops.exhaustExpired(this.deps.worker.concurrency);
    for (const row of exhausted) {
      emit(this.deps, {
        type: 'dead',
        receiptId: row.id,
        consumer: row.consumer,
        attempt: row.attempts,
        reason: 'exhausted',
        error: EXHAUSTED_ERROR,
      });
    }
  }

  /**
   * Runs one claimed receipt under the concurrency limit (into a free lane: see free(); the
   * limit is the backstop). Once shutdown interrupted the worker, a receipt whose handler has
   * not started is not run: processReceipt gives its claim back (its attempt returned).
   */
  private dispatch({ receipt, claimedAt, proofs }: QueuedClaim): Promise<ProcessOutcome> {
    const task = this.limit(async (): Promise<ProcessOutcome> => {
      return processReceipt(receipt, this.deps, this.shutdown.signal, claimedAt, proofs).catch(
        (error: unknown): ProcessOutcome => {
          emitInfrastructure(this.deps, 'process', error);
          return 'unresolved';
        },
      );
    });
    this.inflight.add(task);
    void task.then(() => {
      this.inflight.delete(task);
      this.pump();
    });
    return task;
  }

  /** Starts queued receipts into free lanes; asks for a claim when the queue ran dry. */
  private pump(): void {
    while (this.state === 'running' && this.free() > 0) {
      const next = this.queue.take();
      if (!next) break;
      void this.dispatch(next);
    }
    if (this.claimAgain()) this.wake.notify();
  }

  private async poll(): Promise<void> {
    while (this.state === 'running') {
      const wanted = this.wanted();
      // Nothing to claim while the queue holds work: the loop is alive all the same (createHealth).
      if (wanted === 0) this.lastCycleAt = new Date();
      let claimFailed = false;
      if (wanted > 0) {
        let sweep = this.sweepDue(!this.backlog);
        try {
          const claimedAt = performance.now();
          const claimed = await this.claimBatch(false, wanted);
          this.backlog = claimed.length >= wanted;
          this.queue.add(claimed, claimedAt);
          this.lastCycleAt = new Date();
          this.claimFailures = 0;
        } catch (error) {
          this.backlog = false;
          sweep = false; // the database just failed the claim: one error per poll, not two
          claimFailed = true;
          emitInfrastructure(this.deps, 'claim', error);
          this.stopOnEndedClient(error);
        }
        this.pump();
        // Not once closing: close() waits for the loop, whose last statement is the release.
        if (sweep && this.state === 'running') await this.sweepAfterClaim();
      }
      if (this.state !== 'running') break;
      // A failed claim backs off (1 s, doubling per failure in a row, at most the poll interval)
      // whatever acceptances notify: a wake-up per acceptance retried a failing claim, and
      // reported it, per message (review 45); a whole poll interval (up to an hour) left a
      // listening worker deaf after one transient failure (review 46). A notification meanwhile
      // is kept for after it.
      if (claimFailed) await this.wake.pause(this.claimBackoffMs());
      // After a full claim, pump() wakes the loop as soon as the queue runs dry.
      else if (!this.claimAgain()) await this.waitForWork();
    }
    await this.queue.release();
  }

  /**
   * A claim (or sweep) that failed with FERRY_CLOSED: the application ended the pool or client the
   * worker runs on, which never opens a session again (review 87; EndedClientStop, shared with the
   * relay); so did a handler transaction that never began (the application's pool, when ferry's
   * statements run on another: review 105, where it gave claims back for ever). The loop stops: state 'stopped', `stopReason` saying why (createHealth's liveness
   * reports it down with it); handlers already running finish (their transactions have their
   * connections), queued claims are given back if the client still can, else left to their lease;
   * close() closes it as ever. A database that is unavailable is not this: the loop backs off and
   * claims again.
   */
  private stopOnEndedClient(error: unknown): void {
    if (this.state === 'running' && this.ended.stops(error)) this.state = 'stopped';
  }

  /**
   * Waits pollIntervalMs, or less when acceptance notifies. A wake-up (a notification, or the
   * poll interval passing) that finds the queue above its refill mark is kept as a backlog: the
   * claim it asked for runs once the queue is down to the mark (pump()), not a poll interval
   * later, when the lanes may long have run dry.
   */
  private async waitForWork(): Promise<void> {
    const reason = await this.wake.wait(this.deps.worker.pollIntervalMs);
    if (reason !== 'closed' && this.wanted() === 0) this.backlog = true;
  }

  private claimBackoffMs(): number {
    const delay = reconnectDelayMs(CLAIM_BACKOFF_MS, CLAIM_BACKOFF_MAX_MS, this.claimFailures);
    this.claimFailures += 1;
    return Math.min(this.deps.worker.pollIntervalMs, delay);
  }

  private claimAgain(): boolean {
    return this.backlog && this.wanted() > 0;
  }

  /**
   * How many receipts the next claim asks for: the free lanes plus worker.prefetch, once the
   * queue is down to its refill mark (a quarter of prefetch, at most one per lane), else none.
   * The next claim then runs while the last queued receipts do, so lanes do not wait for it,
   * and claims keep their size (the queue holds at most prefetch plus the mark).
   */
  private wanted(): number {
    const { prefetch, concurrency } = this.deps.worker;
    if (this.queue.size > Math.min(concurrency, Math.floor(prefetch / 4))) return 0;
    return this.free() + prefetch;
  }

  /**
   * Lanes neither running or waiting to run a receipt (inflight) nor reserved for a runOnce()
   * claim in flight. Every receipt is dispatched only into a free lane, so none waits in the
   * concurrency limit, where no lease is renewed (queued claims are: ClaimQueue).
   */
  private free(): number {
    return this.deps.worker.concurrency - this.inflight.size - this.reserved;
  }
}

/**
 * Waits until every promise `pending()` lists has settled (re-reading the list, since settled
 * work may start more), or until `ms` passed. Resolves true when all settled in time.
 */
async function settledWithin(
  pending: () => ReadonlyArray<Promise<unknown> | undefined>,
  ms: number,
): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    for (;;) {
      const open = pending().filter((work): work is Promise<unknown> => work !== undefined);
      if (open.length === 0) return true;
      const settled = await Promise.race([Promise.allSettled(open).then(() => true as const), timeout]);
      if (!settled) return false;
      if (pending().every((work) => work === undefined || open.includes(work))) return true;
    }
  } finally {
    clearTimeout(timer);
  }
}
