import { abortableDelay, backoffDelay, type BackoffPolicy, type RandomSource } from '../backoff';
import type { InboxAcceptInput, InboxAcceptResult } from '../contracts';
import type { Logger } from '../observe/logger';
import type { TransportConsumerEvent, TransportObserver } from './events';
import { InboxAdmissionRejectedError } from '../inbox/errors';
import { acceptIsolated, isBatchWideFailure, sizeMayCause, type AcceptManyFn } from './isolate';
import { outageReport } from './outage';

export interface HoldOptions {
  /** Wait before retry n of a batch whose acceptance failed batch-wide: backoffDelay(n). */
  readonly backoff: BackoffPolicy;
  readonly random?: RandomSource | undefined;
  /** Ends the hold (close(), a lost channel): the batch is released, nothing is counted. */
  readonly signal: AbortSignal;
  /** The consumer that holds the batch: `transport` and `source` of its events and log lines. */
  readonly transport: string;
  readonly source: string;
  /**
   * Told `acceptance-unavailable` at each batch-wide failure, before its wait (`attempt` 1: the
   * outage began; at the admission limit `count` is the refused inputs still held), and
   * `acceptance-recovered` once acceptance answers again.
   */
  readonly observer?: TransportObserver<TransportConsumerEvent> | undefined;
  /** Logs the same: warn when the outage begins, debug for each further attempt, info at recovery. */
  readonly logger?: Logger | undefined;
}

/** One input's answer, by its index in the batch given to acceptHolding. */
export interface AnsweredInput {
  readonly index: number;
  readonly result: InboxAcceptResult;
}

export type HeldAcceptance =
  /** Every input was answered and handed to `settle`. */
  | { readonly kind: 'settled' }
  /**
   * The signal aborted while acceptance was unavailable (or the limit refused some inputs):
   * hand the inputs at `pending` (indices, never given to `settle`) back to the broker.
   */
  | { readonly kind: 'released'; readonly error: unknown; readonly pending: readonly number[] }
  /**
   * The retriable safety net of acceptIsolated threw (not batch-wide) for the inputs at
   * `offered`: they go round the transport's own retry (each spends one). `notOffered`: after the
   * offer window shrank, the inputs not offered since; they did not fail and go back to the broker
   * as `released` ones do, spending nothing. `pending` is both (every input never given to
   * `settle`).
   */
  | {
      readonly kind: 'failed';
      readonly error: unknown;
      readonly pending: readonly number[];
      readonly offered: readonly number[];
      readonly notOffered: readonly number[];
    };

/** Settles answered inputs (ack, delete, dead-letter) before acceptHolding goes on. */
export type SettleAnswered = (answered: readonly AnsweredInput[]) => Promise<void>;

/**
 * acceptIsolated, held through an outage: a batch-wide failure (isBatchWideFailure: database
 * unavailable, pool exhausted, timeout, closed) is never the messages' fault, so instead of
 * returning it to the transport (which would spend a retry or a receive) the same batch is
 * tried again after the backoff, for as long as it takes, until `signal` aborts.
 * At the admission limit (InboxAdmissionRejectedError) the inputs the inbox answered anyway
 * (duplicates, invalid ones) are handed to `settle` at once and only the refused ones are
 * held and tried again after the backoff: admission is back-pressure, it spends no attempt.
 * Every input is handed to `settle` exactly once, unless the result names it `pending`.
 * The outage and the recovery are reported through outageReport, as every transport reports them.
 */
export async function acceptHolding(
  inputs: readonly InboxAcceptInput[],
  acceptMany: AcceptManyFn,
  options: HoldOptions,
  settle: SettleAnswered,
): Promise<HeldAcceptance> {
  const report = outageReport(options);
  let pending = inputs.map((_, index) => index);
  const window = new OfferWindow(pending.length);
  let failures = 0;
  for (;;) {
    const offered = pending.slice(0, window.size);
    let error: unknown;
    let results: InboxAcceptResult[] | undefined;
    try {
      results = await acceptIsolated(
        offered.map((index) => inputs[index]!),
        acceptMany,
      );
    } catch (thrown) {
      if (!isBatchWideFailure(thrown)) {
        if (failures > 0) report.recovered(failures, pending.length);
        return { kind: 'failed', error: thrown, pending, offered, notOffered: pending.slice(offered.length) };
      }
      error = thrown;
    }
    if (results) {
      if (failures > 0) report.recovered(failures, pending.length);
      failures = 0;
      // Outside the try: a throw of `settle` is the transport's, never an acceptance failure to retry.
      const answers = results.map((result, i) => ({ index: offered[i]!, result }));
      await settle(answers);
      pending = pending.slice(offered.length);
      if (pending.length === 0) return { kind: 'settled' };
      // The rest of a batch that had to shrink goes on at once, unless the hold ended meanwhile
      // (close(), a lost channel): then the rest goes back to the broker untouched.
      if (options.signal.aborted) return { kind: 'released', error: options.signal.reason, pending };
      window.succeeded(offered.length);
      continue;
    }
    const answered = admissionAnswers(error, offered);
    // At the admission limit `count` is the refused inputs, not the rest still waiting their turn.
    let count = pending.length;
    if (answered) {
      await settle(answered);
      count = offered.length - answered.length;
      const settled = new Set(answered.map((a) => a.index));
      pending = pending.filter((index) => !settled.has(index));
      if (pending.length === 0) return { kind: 'settled' };
    }
    if (options.signal.aborted) return { kind: 'released', error, pending };
    window.failed(offered.length, sizeMayCause(error));
    failures += 1;
    const delayMs = Math.max(1, backoffDelay(failures, options.backoff, options.random));
    report.unavailable(error, failures, delayMs, count);
    try {
      await abortableDelay(delayMs, options.signal);
    } catch {
      return { kind: 'released', error, pending };
    }
  }
}

/**
 * How many of a held batch's inputs acceptHolding offers at once. All of them at first. After a
 * failure the batch's size may cause (sizeMayCause) half as many, down to one: a batch too big
 * for the deadline then goes through in parts instead of failing whole for ever. After a part
 * goes through the window doubles again, short of the smallest size that failed; that size is
 * tried again (a probe) only after `probeAfter` parts went through at the size below it, and each
 * failed probe doubles `probeAfter`. So a size that times out costs a few probes, not one timeout
 * per part, while after an outage (it failed every size, which says nothing of the size) the
 * window grows back to whole batches within a few parts.
 */
class OfferWindow {
  private current: number;
  /** The smallest offer that failed as its size may cause and has not gone through since. */
  private failedAt = Number.POSITIVE_INFINITY;
  private successes = 0;
  private probeAfter = 2;

  constructor(total: number) {
    this.current = Math.max(1, total);
  }

  get size(): number {
    return this.current;
  }

  failed(offered: number, sizeMayCauseIt: boolean): void {
    if (!sizeMayCauseIt) return;
    this.successes = 0;
    // One input failed too: whatever failed before was not the size.
    if (offered <= 1) {
      this.failedAt = Number.POSITIVE_INFINITY;
      return;
    }
    if (offered >= this.failedAt) this.probeAfter *= 2;
    this.failedAt = Math.min(this.failedAt, offered);
    this.current = Math.ceil(offered / 2);
  }

  succeeded(offered: number): void {
    this.successes += 1;
    if (offered >= this.failedAt) this.failedAt = Number.POSITIVE_INFINITY;
    const doubled = offered * 2;
    if (doubled < this.failedAt || this.successes >= this.probeAfter) {
      if (doubled >= this.failedAt) this.successes = 0;
      this.current = doubled;
    } else {
      this.current = offered;
    }
  }
}

/**
 * The answered inputs of a batch refused at the admission limit (every result but `refused`),
 * by index; null for any other failure, or when the results do not match the batch.
 */
function admissionAnswers(error: unknown, pending: readonly number[]): AnsweredInput[] | null {
  if (!(error instanceof InboxAdmissionRejectedError)) return null;
  if (error.results.length !== pending.length) return null;
  const answered: AnsweredInput[] = [];
  error.results.forEach((result, i) => {
    if (result.kind !== 'refused') answered.push({ index: pending[i]!, result });
  });
  return answered;
}
