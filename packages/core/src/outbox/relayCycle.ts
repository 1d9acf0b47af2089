import { randomUUID } from 'node:crypto';
import type { OutboxMessage, Publisher } from '../contracts';
import type { Logger } from '../observe/logger';
import { AbandonedClaims } from './abandonedClaims';
import type { BrokerSignal, CircuitBreaker } from './circuit';
import type { OutboxEvent } from './events';
import type { ResolvedOutboxOptions } from './options';
import { publishBatch, type ClaimedBatch } from './publishBatch';
import { recoverStep } from './recoverStep';
import { releaseUnavailable } from './releaseUnavailable';
import type { CycleResult } from './relayTypes';
import { reportCompletion, reportInfrastructureError } from './reportCompletion';
import type { ClaimResult } from './sql/claimBatch';
import { toMessage } from './sql/fragments';
import type { RelayStore } from './store';
import type { UnavailableHold } from './unavailableHold';

/** What one relay's cycles share with its loop (relay.ts). */
export interface RelayCycleDeps {
  readonly store: RelayStore;
  readonly options: ResolvedOutboxOptions;
  readonly publisher: Publisher;
  readonly logger: Logger;
  readonly emit: (event: OutboxEvent) => void;
  readonly breaker: CircuitBreaker;
  readonly hold: UnavailableHold;
  /** Aborts when close() stops waiting for publishes (shutdownTimeout passed). */
  readonly shutdown: AbortSignal;
  /** Whether close() was called: no claim is sent, and rows claimed meanwhile go back. */
  readonly stopping: () => boolean;
  /** Called as a claim is sent (wake-ups until then are answered by it). */
  readonly claiming: () => void;
}

/**
 * The steps of one relay cycle, apart from the loop that runs them (relay.ts): the claim (claims
 * dropped earlier handed back first, recovery, a half-open probe), then the publish and completion
 * of what it claimed, with the claim's cursors kept from one claim to the next.
 */
export class RelayCycle {
  /** Round-robin position of the claim's key scan (see claimBatch). */
  private laneCursor: string | null = null;
  /** The next claim starts with the key scan (see claimBatch). */
  private keyScanFirst = false;
  /** Where the next half-open probe's round-robin visit of destinations starts (probeClaim). */
  private probeCursor: string | null = null;
  /** Where the next half-open probe's key scan starts (probeClaim). */
  private probeKeyCursor: string | null = null;
  /** Claims dropped while PostgreSQL may still hold rows under their tokens. */
  private readonly abandoned: AbandonedClaims;
  private readonly store: RelayStore;
  private readonly options: ResolvedOutboxOptions;
  private readonly logger: Logger;
  private readonly emit: (event: OutboxEvent) => void;
  private readonly breaker: CircuitBreaker;
  private readonly hold: UnavailableHold;

  constructor(private readonly deps: RelayCycleDeps) {
    ({
      store: this.store,
      options: this.options,
      logger: this.logger,
      emit: this.emit,
      breaker: this.breaker,
      hold: this.hold,
    } = deps);
    this.abandoned = new AbandonedClaims(
      deps.logger,
      Math.max(1, Math.floor(deps.options.statementTimeout / 2)),
    );
  }

  /**
   * The rows of claims dropped earlier handed back (abandonedClaims.ts; before recovery, which
   * would count them), recovery (when `recovering`: every tenth cycle), then the claim; returns the batch to publish.
   */
  async claimStep(result: CycleResult, recovering: boolean): Promise<ClaimedBatch | undefined> {
    if (this.abandoned.pending) await this.abandoned.settle(this.store, recovering);
    if (recovering) await recoverStep(this.store, this.options, this.emit, this.logger, result);
    const limit = this.breaker.claimLimit(this.options.batchSize);
    if (this.deps.stopping() || limit === 0) return undefined;
    const token = randomUUID();
    this.deps.claiming();
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
    const full = messages.length >= limit || claim.bytesFull === true;
    if (!this.deps.stopping()) return { token, messages, claimedAt, circuitEpoch, full };
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
          maxBytes: this.options.maxBatchBytes,
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
        maxBytes: this.options.maxBatchBytes,
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

  async publishAndComplete(batch: ClaimedBatch, result: CycleResult): Promise<void> {
    const { store, options, logger } = this;
    const { token, messages } = batch;
    const published = await publishBatch({
      store,
      publisher: this.deps.publisher,
      token,
      messages,
      options,
      shutdown: this.deps.shutdown,
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
}
