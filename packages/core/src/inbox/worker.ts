import pLimit, { type LimitFunction } from 'p-limit';
import { FerryError } from '../errors';
import { emit, emitInfrastructure, processReceipt, type ProcessDeps, type ProcessOutcome } from './process';
import type { ClaimedReceipt } from './types';

export interface RunOnceResult {
  readonly claimed: number;
  readonly completed: number;
  readonly retried: number;
  readonly dead: number;
  readonly leaseLost: number;
  /** Failures whose transition could not be written; the lease recovers them. */
  readonly unresolved: number;
}

type State = 'idle' | 'running' | 'closing' | 'closed';

const COUNTERS: Record<ProcessOutcome, keyof Omit<RunOnceResult, 'claimed'>> = {
  completed: 'completed',
  retry: 'retried',
  dead: 'dead',
  lease_lost: 'leaseLost',
  unresolved: 'unresolved',
};

/**
 * The inbox worker: a small state machine (idle → running → closing → closed) that claims
 * up to its free concurrency, hands each receipt to processReceipt through p-limit, and
 * polls every pollIntervalMs when there was less work than free slots.
 */
const SWEEP_EVERY_CLAIMS = 10;

export class InboxWorker<TTx> {
  private state: State = 'idle';
  private readonly limit: LimitFunction;
  private readonly inflight = new Set<Promise<ProcessOutcome>>();
  private readonly shutdown = new AbortController();
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private closing: Promise<void> | undefined;
  /** Claims since expired, exhausted claims were last swept to DEAD (see claimBatch). */
  private claimsSinceSweep = 0;

  constructor(private readonly deps: ProcessDeps<TTx>) {
    this.limit = pLimit(deps.worker.concurrency);
  }

  get running(): boolean {
    return this.state === 'running';
  }

  /** Starts polling. Safe to call twice. */
  start(): void {
    this.assertOpen();
    if (this.state === 'running') return;
    this.state = 'running';
    this.loop = this.poll();
  }

  /** Claims one batch (up to the free concurrency), processes it and waits for it. */
  async runOnce(): Promise<RunOnceResult> {
    this.assertOpen();
    const claimed = await this.claimBatch(true);
    const outcomes = await Promise.all(claimed.map((receipt) => this.dispatch(receipt)));
    const result = {
      claimed: claimed.length,
      completed: 0,
      retried: 0,
      dead: 0,
      leaseLost: 0,
      unresolved: 0,
    };
    for (const outcome of outcomes) result[COUNTERS[outcome]] += 1;
    return result;
  }

  /**
   * Stops claiming, waits up to shutdownTimeoutMs for running handlers, then aborts their
   * signals and returns; an interrupted claim is recovered through its lease. Safe to call twice.
   */
  close(): Promise<void> {
    this.closing ??= this.drain();
    return this.closing;
  }

  private async drain(): Promise<void> {
    this.state = 'closing';
    this.wake?.();
    await this.loop;
    const drained = Promise.allSettled([...this.inflight]).then(() => true);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), this.deps.worker.shutdownTimeoutMs);
    });
    const finished = await Promise.race([drained, timeout]);
    clearTimeout(timer);
    if (!finished) {
      this.deps.logger?.warn(
        { active: this.inflight.size },
        'ferry inbox shutdown timed out; interrupting handlers',
      );
      this.shutdown.abort(new FerryError('FERRY_CLOSED', 'the inbox worker shut down'));
    }
    this.state = 'closed';
  }

  private assertOpen(): void {
    if (this.state === 'closing' || this.state === 'closed') {
      throw new FerryError('FERRY_CLOSED', 'the inbox worker is closed');
    }
  }

  private free(): number {
    return this.deps.worker.concurrency - this.inflight.size;
  }

  /**
   * Claims up to the free slots. The sweep that turns expired claims with no attempts left
   * into DEAD costs a query, so a busy poll loop runs it every tenth claim (and every idle
   * poll) instead of before each claim; runOnce() always sweeps.
   */
  private async claimBatch(sweep: boolean): Promise<ClaimedReceipt[]> {
    const free = this.free();
    if (free <= 0) return [];
    const { ops } = this.deps;
    if (sweep || this.claimsSinceSweep >= SWEEP_EVERY_CLAIMS) await this.sweepExhausted();
    this.claimsSinceSweep += 1;
    return ops.claim(free);
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
        error: 'attempts exhausted: the last claim expired without completing',
      });
    }
  }

  private dispatch(receipt: ClaimedReceipt): Promise<ProcessOutcome> {
    const task = this.limit(() =>
      processReceipt(receipt, this.deps, this.shutdown.signal).catch((error: unknown): ProcessOutcome => {
        emitInfrastructure(this.deps, 'process', error);
        return 'unresolved';
      }),
    );
    this.inflight.add(task);
    void task.then(() => {
      this.inflight.delete(task);
      this.wake?.();
    });
    return task;
  }

  private async poll(): Promise<void> {
    let full = false;
    while (this.state === 'running') {
      const free = this.free();
      const idle = !full;
      full = free <= 0;
      if (!full) {
        try {
          const claimed = await this.claimBatch(idle);
          for (const receipt of claimed) void this.dispatch(receipt);
          full = claimed.length >= free;
        } catch (error) {
          emitInfrastructure(this.deps, 'claim', error);
        }
      }
      if (this.state !== 'running') break;
      await this.sleep(full ? undefined : this.deps.worker.pollIntervalMs);
    }
  }

  /** Waits for the poll interval (or, when full, for a free slot); close() wakes it early. */
  private sleep(ms: number | undefined): Promise<void> {
    if (ms === undefined && this.free() > 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = ms === undefined ? undefined : setTimeout(done, ms);
      function done(): void {
        if (timer) clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}
