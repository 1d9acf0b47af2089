import { randomUUID } from 'node:crypto';
import type { OutboxMessage, Publisher } from '../contracts';
import { FerryError } from '../errors';
import { defaultLogger, type Logger } from '../observe/logger';
import { safeEmit } from '../observe/safeEmit';
import type { SqlExecutor } from '../sql/executor';
import { reconnectDelayMs } from './backoff';
import type { OutboxObserver } from './observer';
import { resolveOutboxOptions, type OutboxOptions, type ResolvedOutboxOptions } from './options';
import { publishBatch } from './publishBatch';
import { reportCompletion, type Emit } from './reportCompletion';
import { toMessage } from './sql/fragments';
import { relayStore, type RelayStore } from './store';
import { WakeSignal } from './wakeSignal';
import { NotifyListener } from './wakeup';

export interface RelayConfig {
  db: SqlExecutor;
  publisher: Publisher;
  /** Connection string for the dedicated LISTEN connection; without it the relay only polls. */
  listenUrl?: string;
  options?: OutboxOptions;
  observer?: OutboxObserver;
  logger?: Logger;
  /** Replaces the SQL transitions (tests, instrumentation). */
  store?: RelayStore;
}

export interface CycleResult {
  claimed: number;
  sent: number;
  retried: number;
  failed: number;
  /** Rows whose outcome was discarded because the claim was lost. */
  lost: number;
  /** Claimed rows handed back unpublished because the relay was closing. */
  released: number;
  recovered: number;
  poisoned: number;
}

export type RelayState = 'idle' | 'running' | 'closing' | 'closed';

export interface Relay {
  /** One cycle: recovery (every tenth cycle, starting with the first), claim, publish, complete. */
  runOnce(): Promise<CycleResult>;
  /** Starts the poll loop (and LISTEN when listenUrl is set). Idempotent. */
  start(): void;
  /** Stops claiming, drains in-flight publishes up to shutdownTimeout, releases unstarted claims. Idempotent. */
  close(): Promise<void>;
  readonly state: RelayState;
  /** Cycles run so far. */
  readonly cycles: number;
  /** True while the loop waits for the next poll (or a wake-up). */
  readonly idle: boolean;
  readonly options: ResolvedOutboxOptions;
  readonly listener: NotifyListener | undefined;
}

const emptyResult = (): CycleResult => ({
  claimed: 0,
  sent: 0,
  retried: 0,
  failed: 0,
  lost: 0,
  released: 0,
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
  private readonly logger: Logger;
  private readonly store: RelayStore;
  private readonly wake = new WakeSignal();
  /** Stops claiming at once (close()). */
  private stopping = false;
  /** Aborts in-flight publishes once shutdownTimeout has passed. */
  private readonly hardStop = new AbortController();
  private loop: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private readonly emit: Emit;

  constructor(private readonly config: RelayConfig) {
    this.options = resolveOutboxOptions(config.options);
    const logger = config.logger ?? defaultLogger('ferry.outbox.relay');
    this.logger = logger;
    for (const warning of this.options.warnings) logger.warn({ option: 'stuckThreshold' }, warning);
    this.store = config.store ?? relayStore(config.db);
    const observer: OutboxObserver = config.observer ?? {};
    this.emit = (name, event) =>
      safeEmit(
        (e: typeof event) => (observer[name] as ((x: unknown) => unknown) | undefined)?.call(observer, e),
        event,
        logger,
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

  async runOnce(): Promise<CycleResult> {
    if (this.state === 'closed') throw new FerryError('FERRY_CLOSED', 'the relay is closed');
    const result = emptyResult();
    if (this.cycles++ % 10 === 0) await this.recover(result);
    if (this.stopping) return result;
    const token = randomUUID();
    const claim = await this.store.claim({
      token,
      limit: this.options.batchSize,
      leaseMs: this.options.lease.duration,
      failedHead: this.options.ordering.failedHead,
    });
    if (claim.rows.length === 0) return result;
    const messages = claim.rows.map(toMessage);
    result.claimed = messages.length;
    this.emit('claimed', { claimToken: token, messages });
    if (claim.skippedIds.length > 0) {
      this.logger.warn({ ids: claim.skippedIds }, 'ordering: published past FAILED events');
      this.emit('orderingSkipped', { skippedIds: claim.skippedIds });
    }
    if (this.stopping) {
      result.released = await this.store.release(
        token,
        messages.map((m) => m.id),
      );
      return result;
    }
    await this.publishAndComplete(token, messages, result);
    return result;
  }

  private async publishAndComplete(
    token: string,
    messages: OutboxMessage[],
    result: CycleResult,
  ): Promise<void> {
    const { store, options, logger } = this;
    const published = await publishBatch({
      store,
      publisher: this.config.publisher,
      token,
      messages,
      options,
      shutdown: this.hardStop.signal,
    });
    if (published.kind === 'lost') {
      result.lost = messages.length;
      logger.warn({ claimToken: token, reason: published.reason }, 'lease lost; outcomes discarded');
      this.emit('leaseLost', { claimToken: token, ids: messages.map((m) => m.id), reason: published.reason });
      return;
    }
    const completed = await store.complete(token, published.completions);
    reportCompletion({
      token,
      messages,
      completions: published.completions,
      completed,
      result,
      emit: this.emit,
      logger,
    });
  }

  private async recover(result: CycleResult): Promise<void> {
    const { requeued, poisoned } = await this.store.recover({
      limit: this.options.recoveryBatchSize,
      maxClaims: this.options.poisonGuard.maxClaims,
    });
    result.recovered = requeued;
    result.poisoned = poisoned.length;
    if (requeued + poisoned.length > 0)
      this.emit('recovered', { requeued, poisoned: poisoned.map((p) => p.id) });
    for (const row of poisoned) {
      this.logger.error({ id: row.id, type: row.type }, row.error);
      this.emit('failed', {
        id: row.id,
        type: row.type,
        attempt: row.retryCount + 1,
        error: row.error,
        reason: 'poison_guard',
      });
    }
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      let full = false;
      try {
        full = (await this.runOnce()).claimed >= this.options.batchSize;
        failures = 0;
      } catch (error) {
        const delay = reconnectDelayMs(this.options.errorBackoff, 30_000, failures);
        failures += 1;
        this.logger.error({ err: error, delayMs: delay }, 'outbox relay cycle failed');
        await this.wake.wait(delay);
        continue;
      }
      if (!full) {
        this.idle = true;
        await this.wake.wait(this.options.pollInterval);
        this.idle = false;
      }
    }
  }

  start(): void {
    if (this.loop || this.state !== 'idle') return;
    this.state = 'running';
    this.listener?.start();
    this.loop = this.run();
  }

  close(): Promise<void> {
    this.closing ??= this.drain();
    return this.closing;
  }

  private async drain(): Promise<void> {
    this.state = 'closing';
    this.stopping = true;
    this.wake.close();
    await this.listener?.close();
    if (this.loop) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), this.options.shutdownTimeout);
      });
      const outcome = await Promise.race([this.loop.then(() => 'drained' as const), timeout]);
      clearTimeout(timer);
      if (outcome === 'timeout') {
        this.hardStop.abort(new FerryError('FERRY_TIMEOUT', 'shutdown timeout'));
        this.logger.warn('outbox relay shutdown timed out; unfinished claims are left to lease recovery');
      }
    }
    this.state = 'closed';
  }
}

/** Creates a relay; options are resolved (and validated) here, throwing FerryConfigError. */
export function createRelay(config: RelayConfig): Relay {
  return new OutboxRelay(config);
}
