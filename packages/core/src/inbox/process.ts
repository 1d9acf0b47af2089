import type { Logger } from '../observe/logger';
import { FerryError } from '../errors';
import { onAbort } from '../deadline';
import { LazyAbort } from '../lazyAbort';
import { startLease } from '../lease';
import { safeEmit } from '../observe/safeEmit';
import { isAbandonedNotEnded } from '../sql/transactionLimits';
import { clientEnded, sessionGone } from '../sql/dbErrors';
import { inboxOutageDelayMs, inboxRetryDelayMs, type RandomSource } from '../backoff';
import {
  InboxInvalidPayloadError,
  InboxLeaseLostError,
  InboxPermanentError,
  InboxTransactionEndedError,
  InboxUnsupportedSchemaError,
} from './errors';
import { runWithWrappers } from './handlerContext';
import { storedPayload } from './storedPayload';
import { endProcessSpan, messageScopeOf, runInMessageScope, startProcessSpan } from '../tracing';
import type { ResolvedInboxWorkerOptions } from './options';
import { describeError, MAX_OBSERVED_ERROR_CHARS, type Redactor } from '../redact/redact';
import { isIsolationRefusal, type InboxWorkerOps } from './workerOps';
import type { SessionOutage } from './sessionOutage';
import type {
  ClaimedReceipt,
  InboxEvent,
  InboxHandler,
  InboxHandlerContext,
  InboxHandlerContextWrapper,
  InboxHandlerFunction,
  InboxObserver,
} from './types';

export type ProcessOutcome = 'completed' | 'retry' | 'dead' | 'lease_lost' | 'unresolved';

export interface ProcessDeps<TTx> {
  readonly ops: InboxWorkerOps<TTx>;
  readonly worker: ResolvedInboxWorkerOptions;
  readonly handlers: Readonly<Record<string, InboxHandler<TTx>>>;
  readonly wrappers: readonly InboxHandlerContextWrapper<TTx>[];
  readonly random: RandomSource;
  readonly observer: InboxObserver | undefined;
  readonly logger: Logger | undefined;
  /** Applied to every error text stored in last_error, logged or observed. */
  readonly redact: Redactor;
  /** The worker's outage of the application's pool, shared by its lanes. */
  readonly outage: SessionOutage;
  /**
   * Told when a handler transaction found the application's pool ended for good (clientEnded):
   * the worker stops as on an ended claim client (EndedClientStop, review 105).
   */
  readonly onEndedClient?: (error: unknown) => void;
}

export function emit(deps: Pick<ProcessDeps<unknown>, 'observer' | 'logger'>, event: InboxEvent): void {
  if (event.type === 'dead') {
    const { receiptId, consumer, attempt, reason, error } = event;
    deps.logger?.warn({ receiptId, consumer, attempt, reason, error }, 'inbox receipt DEAD');
  }
  safeEmit(deps.observer, event, deps.logger);
}

export function emitInfrastructure(
  deps: Pick<ProcessDeps<unknown>, 'observer' | 'logger' | 'redact'>,
  operation: string,
  error: unknown,
): void {
  deps.logger?.warn(
    { operation, error: describeError(error, undefined, deps.redact) },
    'ferry inbox infrastructure error',
  );
  emit(deps, {
    type: 'infrastructure-error',
    operation,
    error: describeError(error, MAX_OBSERVED_ERROR_CHARS, deps.redact),
  });
}

async function invokeHandler<TTx>(
  handler: InboxHandler<TTx> | undefined,
  receipt: ClaimedReceipt,
  context: InboxHandlerContext<TTx>,
  redact: Redactor,
): Promise<void> {
  if (handler === undefined)
    throw new InboxPermanentError(`no handler registered for consumer ${receipt.consumer}`);
  const payload = storedPayload(receipt);
  if (typeof handler === 'function') return handler(payload, context);
  const parsed = handler.parse ? await parsePayload(handler, payload, redact) : payload;
  return handler.handle(parsed as never, context);
}

/**
 * What the handler's `parse` answered, awaited: an async schema check (zod's parseAsync) answers
 * a promise, which handle() was given as the payload while its rejection went unhandled (a
 * refused payload COMPLETED, and a plain Node process ended; review 83). It runs in the handler
 * transaction, under the handler's deadline. Its throw or rejection is an invalid payload (DEAD),
 * described with the application's redactor before describeError cuts it: a text cut first, then
 * redacted, could keep half a secret its rule no longer matches (a URL's password without its
 * '@'; review 83).
 */
async function parsePayload<TTx>(
  handler: Exclude<InboxHandler<TTx>, InboxHandlerFunction<TTx>>,
  payload: Readonly<Record<string, unknown>>,
  redact: Redactor,
): Promise<unknown> {
  try {
    return await handler.parse?.(payload);
  } catch (error) {
    if (isReceiptVerdict(error)) throw error;
    throw new InboxInvalidPayloadError(describeError(error, undefined, redact), { cause: error });
  }
}

/**
 * Whether `error` already says what becomes of the receipt (DEAD as an invalid payload or an
 * unsupported schema); a thrown value whose prototype cannot be read (a hostile Proxy) is not one,
 * and is an invalid payload like any other throw of parse, never the error its trap threw.
 */
function isReceiptVerdict(error: unknown): boolean {
  try {
    return error instanceof InboxUnsupportedSchemaError || error instanceof InboxInvalidPayloadError;
  } catch {
    return false;
  }
}

function contextFor<TTx>(receipt: ClaimedReceipt, tx: TTx, abort: LazyAbort): InboxHandlerContext<TTx> {
  return {
    tx,
    receiptId: receipt.id,
    messageId: receipt.messageId,
    consumer: receipt.consumer,
    tenantId: receipt.tenantId,
    messageType: receipt.messageType,
    attempt: receipt.attempts,
    lifetimeAttempts: receipt.lifetimeAttempts,
    maxAttempts: receipt.maxAttempts,
    headers: receipt.headers,
    replay: receipt.replay,
    get signal() {
      return abort.signal;
    },
  };
}

/**
 * Runs one claimed receipt: handler and fenced completion in one transaction, the lease kit
 * renewing while it runs. `claimedAt` (performance.now() when the claim was sent) starts
 * the lease's local clock: once it cannot be proven alive (leaseMs - heartbeatIntervalMs
 * without a successful renewal) or a renewal finds it taken, the handler's signal aborts
 * with InboxLeaseLostError. `shutdown` aborts the handler's signal too. `proofs`: the worker queue's
 * renewals of the claim in flight when it left the queue (QueuedClaim.proofs); each that answers
 * it owned proves the lease from its send time (Lease.prove), later than `claimedAt`.
 */
export async function processReceipt<TTx>(
  receipt: ClaimedReceipt,
  deps: ProcessDeps<TTx>,
  shutdown: AbortSignal,
  claimedAt: number,
  proofs: ReadonlyArray<Promise<number | undefined>> = [],
): Promise<ProcessOutcome> {
  // onAbort never calls back for a signal already aborted: checked first (review 102).
  if (shutdown.aborted) return giveBack(receipt, deps);
  const abort = new LazyAbort();
  // Ended once the receipt's outcome is known (ferry.outcome), after the failure transition.
  // Started before the lease: nothing between its start and the try that stops it may throw.
  const span = startProcessSpan(receipt);
  // Whether the handler transaction began (its claim proven) and the handler was let start, and
  // whether an interruption (its deadline, its lease lost) came before: see the catch below.
  let handlerStarted = false;
  let interruptedBeforeHandler = false;
  // Whether a renewal found the claim held by another (the operator's forced release, a lease
  // recovered elsewhere): the claim is not this worker's to give back, nor its pool's outage.
  let takenOver = false;
  // A lease lost before the handler started ends the wait for its transaction at once: the claim
  // goes back now (below), not once the transaction got a session, began, and found it lost (on a
  // slow database or a busy pool that came after its lease ran out on the database too). The
  // transaction starts no handler once it begins (it checks the lease first).
  let lostBeforeHandler: ((reason: unknown) => void) | undefined;
  // Whether it was so lost (not interrupted by shutdown or its deadline): health's cycling claims.
  let leaseLostEarly = false;
  const lostEarly = new Promise<never>((_resolve, reject) => {
    lostBeforeHandler = reject;
  });
  lostEarly.catch(() => undefined);
  const lease = startLease({
    durationMs: deps.worker.leaseMs,
    intervalMs: deps.worker.heartbeatIntervalMs,
    claimedAt,
    renew: (signal) => deps.ops.renew(receipt, signal),
    onLost: (loss) => {
      interruptedBeforeHandler ||= !handlerStarted;
      takenOver = loss.reason === 'taken_over';
      const reason = new InboxLeaseLostError(receipt.id);
      abort.abort(reason);
      if (!handlerStarted) {
        leaseLostEarly = true;
        lostBeforeHandler?.(reason);
      }
    },
    onError: (error) => emitInfrastructure(deps, 'heartbeat', error),
  });
  for (const proof of proofs) {
    void proof.then((sentAt) => {
      if (sentAt !== undefined) lease.prove(sentAt);
    });
  }
  // Shutdown interruption and the transaction deadline both hand the claim to its lease:
  // renewals stop, so a handler that ignores its signal cannot hold the receipt forever.
  const interrupt = (reason: unknown): void => {
    interruptedBeforeHandler ||= !handlerStarted;
    void lease.stop();
    abort.abort(reason);
  };
  // Shutdown also stops waiting for the transaction: a handler that never returns (and ignores
  // its signal) cannot hold runOnce() or its lane past close(). The deadline does so only a
  // heartbeat interval later (below), leaving the transaction's own timeout the time to end it
  // with PostgreSQL's precise error. One promise per receipt,
  // not per worker: racing a long-lived promise would keep a reaction per receipt until close().
  // Stopping to wait also tells the adapter (the transaction's signal), which then ends the
  // transaction for real where it can reach the connection: its pooled connection comes back.
  const abandon = new AbortController();
  let stopWaiting: ((reason: unknown) => void) | undefined;
  const interrupted = new Promise<never>((_resolve, reject) => {
    stopWaiting = (reason) => {
      abandon.abort(reason);
      reject(reason);
    };
  });
  interrupted.catch(() => undefined);
  // One listener on the worker's shutdown signal for all lanes (onAbort), not one per receipt.
  const unlistenShutdown = onAbort(shutdown, () => {
    interrupt(shutdown.reason);
    stopWaiting?.(shutdown.reason);
  });
  // Past the deadline, waiting ends one heartbeat interval later (the transaction's own error
  // comes first when it can): a handler or wrapper whose promise never settles, ignoring its
  // signal, must not hold runOnce() or its lane for ever. The receipt is still leased then
  // (heartbeat < lease / 2), so its failure is recorded; the transaction can no longer complete.
  let giveUp: ReturnType<typeof setTimeout> | undefined;
  const deadline = setTimeout(() => {
    // Not begun in time (no session lent, or its first statement unanswered): an outage (no
    // SQLSTATE: sessionGone), as transactionMaxWaitMs passing.
    const timeout = handlerStarted
      ? new FerryError('FERRY_TIMEOUT', 'the handler transaction exceeded transactionTimeoutMs')
      : new FerryError(
          'FERRY_DATABASE_UNAVAILABLE',
          `the handler transaction did not begin within transactionTimeoutMs (${deps.worker.transactionTimeoutMs} ms)`,
        );
    interrupt(timeout);
    giveUp = setTimeout(() => stopWaiting?.(timeout), deps.worker.heartbeatIntervalMs);
    giveUp.unref?.();
  }, deps.worker.transactionTimeoutMs);
  deadline.unref?.();
  const started = performance.now();
  let outcome: ProcessOutcome = 'unresolved';
  let failure: { readonly error: unknown } | undefined;
  let transaction: Promise<void> | undefined;
  try {
    // The handler runs with its span as the active context and the receipt as the message
    // scope that emits inherit correlation, causation and trace context from.
    transaction = span.run(() =>
      runInMessageScope(messageScopeOf(receipt.messageId, receipt.headers), () =>
        deps.ops.transaction(
          receipt,
          async (tx) => {
            // A transaction that began only after an interruption (it waited for a connection)
            // starts no handler: after shutdown, its claim has been given back; after its
            // deadline or its lease lost, it is given back below. Nor does it end the worker's
            // outage: a pool that lends every session only after the deadline is one (review 149).
            if (abort.isAborted) throw abort.reason;
            // Begun in time: whatever outage the worker saw is over.
            deps.outage.over();
            handlerStarted = true;
            const context = contextFor(receipt, tx, abort);
            const handler = deps.handlers[receipt.consumer];
            await runWithWrappers(deps.wrappers, context, () =>
              invokeHandler(handler, receipt, context, deps.redact),
            );
            if (abort.isAborted) throw abort.reason;
            const completion = await deps.ops.complete(tx, receipt);
            if (completion === 'transaction_ended') throw new InboxTransactionEndedError(receipt.id);
            if (completion !== 'completed') throw new InboxLeaseLostError(receipt.id);
          },
          abandon.signal,
        ),
      ),
    );
    // Reported also after the worker stopped waiting (close() may have returned): its connection is still held.
    transaction.catch((error: unknown) => {
      if (isAbandonedNotEnded(error)) emitInfrastructure(deps, 'abandon-transaction', error);
    });
    await Promise.race([transaction, interrupted, lostEarly]);
    emit(deps, completedEvent(receipt, started, false));
    outcome = 'completed';
    return outcome;
  } catch (error) {
    failure = { error };
    // Shutdown interrupted it: a handler that started is abandoned to its lease (ferry writes
    // nothing more for this claim); one that never started gives its claim back, its attempt
    // returned, before close() returns: left to the lease, it was charged an attempt no handler
    // used, and the last one made it DEAD (review 102).
    if (shutdown.aborted) {
      if (!handlerStarted) {
        await lease.stop();
        outcome = await giveBack(receipt, deps);
      }
      return outcome;
    }
    // No session to begin the handler's transaction on (the application's pool busy past
    // transactionMaxWaitMs, the server refusing connections): an outage, and the handler never
    // ran, so the claim goes back with its attempt, due after the retry backoff (claimed again at
    // once it would fail again at once), or later once the outage has lasted (its returned
    // attempt does not grow the backoff: review 104). Charged, a pool exhausted for a while made
    // healthy receipts DEAD (review 103). So is a transaction whose deadline passed, or whose
    // lease was lost, before its handler started (it waited for a session, its first statement
    // was in flight, or its READ COMMITTED rerun waited for a second session; it starts no
    // handler once it begins): charged, a pool busy past transactionTimeoutMs spent an attempt no
    // handler used, and a handler that threw InboxPermanentError on its only run went DEAD at
    // lifetime_attempts 2 (review 29's poison case on a loaded machine; review 149). If the give-back fails too, the lease recovers the claim.
    // A lease a renewal found not held before the handler started is given back if the claim is
    // still under its token (its lease ran out on the database clock), else reported lease-lost, as
    // after it started (a forced release, a recovery elsewhere); neither is an outage of the pool.
    // A pool the application ended for good (FERRY_CLOSED) never lends one again: the worker stops
    // claiming, as when its own client was ended, and its liveness says why (review 105).
    if (!handlerStarted && (sessionGone(error) || interruptedBeforeHandler)) {
      // Given back without waiting for a renewal in flight: stopped, the kit ignores its answer,
      // and one sent before the give-back only extended a lease the give-back then ends.
      const stopped = lease.stop();
      // A renewal that found the claim not held while its transaction waited: taken over (nothing of
      // it is this worker's any more: lease-lost), or, on a database slow enough, its lease ran out
      // there though nobody claimed it since (still this worker's to give back uncharged): the
      // give-back under its claim token tells them apart (giveBackIfHeld). Only a session refused
      // meanwhile also counts as the outage.
      const outage = sessionGone(error) || !takenOver;
      let outageMs = 0;
      if (outage) {
        emitInfrastructure(deps, 'handler-transaction', error);
        outageMs = deps.outage.noSession(describeError(error, MAX_OBSERVED_ERROR_CHARS, deps.redact));
        if (clientEnded(error)) deps.onEndedClient?.(error);
      }
      outcome = takenOver
        ? await giveBackIfHeld(receipt, deps, started)
        : await giveBack(receipt, deps, outageDelayMs(receipt, outageMs, deps));
      if (leaseLostEarly && outcome === 'unresolved') deps.outage.lostBeforeHandler(1);
      // Given back while its transaction may still wait for a session (lostEarly): the lane stays
      // taken until it unwinds (or shutdown or its deadline gives it up), so a worker that loses
      // leases so never has more handler transactions than lanes.
      await Promise.race([transaction?.then(undefined, () => undefined), interrupted.catch(() => undefined)]);
      await stopped;
      return outcome;
    }
    // The claim check found the claim not this worker's before its handler started: no attempt
    // was used, so none is charged (review 151).
    if (!handlerStarted && isLeaseLost(error)) {
      await lease.stop();
      outcome = await giveBackIfHeld(receipt, deps, started);
      // Still under its token: its lease ran out on the database before the handler (a claim that cycles).
      if (outcome === 'unresolved') deps.outage.lostBeforeHandler(1);
      return outcome;
    }
    // Any other failure before the handler started is one of ferry's own statements (the claim
    // check refused with 40001 or 40P01 under a SERIALIZABLE default, its statement deadline): no
    // handler ran, so none is charged (charged, review 29's poison receipt was claimed twice, and at
    // maxAttempts 1 a receipt went DEAD unrun). Not a transaction still at another isolation after
    // its READ COMMITTED rerun: a configuration the receipt's failure names (OtherIsolation).
    if (!handlerStarted && !isIsolationRefusal(error)) {
      await lease.stop();
      emitInfrastructure(deps, 'handler-transaction', error);
      outcome = await giveBackIfHeld(receipt, deps, started);
      return outcome;
    }
    outcome = await settleFailure(receipt, error, deps, started);
    return outcome;
  } finally {
    endProcessSpan(span, outcome, failure, deps.redact);
    clearTimeout(deadline);
    clearTimeout(giveUp);
    unlistenShutdown();
    await lease.stop();
  }
}

/**
 * Gives back a claim whose handler never started (shutdown interrupted it first, or its transaction
 * had no session): due again (at its old due time, or `dueInMs` from now), its attempt returned
 * (releaseClaims, fenced by claim token); if that fails, its lease recovers it.
 * Counted `unresolved`, as the queued claims close() gives back.
 */
async function giveBack<TTx>(
  receipt: ClaimedReceipt,
  deps: ProcessDeps<TTx>,
  dueInMs?: number,
): Promise<ProcessOutcome> {
  try {
    await deps.ops.release([receipt], dueInMs);
  } catch (error) {
    emitInfrastructure(deps, 'release', error);
  }
  return 'unresolved';
}

/**
 * A claim found not held before its handler started, by the handler transaction's claim check
 * (beginHandler) or by a lease renewal while the transaction waited, so no handler ran.
 * Lost it may be (a forced release or a recovery took it: lease-lost). But the check also reads it
 * lost while a forced release holds the receipt's advisory lock, and that release may then not
 * take it (it rolled back with the operator's transaction, or found the row locked by a renewal
 * and answered it `running`), and once its lease ran out on the database clock (a database slow
 * enough that the renewals came late) though nobody claimed it since: either way the claim is
 * still this worker's. Recorded as a failure, or left to the lease's recovery, it was charged an
 * attempt no handler used, and with none left went DEAD unrun (review 151; the slow-database
 * fault scenario). So it is given back (releaseClaims: under its claim token, its lease run out or
 * not), its attempt returned, due after the retry backoff (claimed again at once while the release
 * is still open, its check would fail again at once); only a claim not given back is read again,
 * completed meanwhile or lost. If a statement fails, the lease recovers the claim.
 */
async function giveBackIfHeld<TTx>(
  receipt: ClaimedReceipt,
  deps: ProcessDeps<TTx>,
  started: number,
): Promise<ProcessOutcome> {
  try {
    const released = await deps.ops.release([receipt], retryDelayMs(receipt, deps));
    return released.length > 0 ? 'unresolved' : await notOwned(receipt, deps, started);
  } catch (error) {
    emitInfrastructure(deps, 'release', error);
    return 'unresolved';
  }
}

/** Whether `error` is InboxLeaseLostError; a thrown value whose prototype cannot be read is not. */
function isLeaseLost(error: unknown): boolean {
  try {
    return error instanceof InboxLeaseLostError;
  } catch {
    return false;
  }
}

function completedEvent(receipt: ClaimedReceipt, started: number, reconciled: boolean): InboxEvent {
  return {
    type: 'completed',
    receiptId: receipt.id,
    consumer: receipt.consumer,
    attempt: receipt.attempts,
    durationMs: Math.round(performance.now() - started),
    reconciled,
  };
}

/** Why a failure is final, if it is; a thrown value whose prototype cannot be read (a hostile Proxy) is not a ferry error. */
function deadReason(error: unknown, receipt: ClaimedReceipt) {
  try {
    if (error instanceof InboxPermanentError) return 'permanent' as const;
    if (error instanceof InboxInvalidPayloadError) return 'invalid_payload' as const;
    if (error instanceof InboxUnsupportedSchemaError) return 'unsupported_schema' as const;
  } catch {
    // Read as any other failure: retried until its attempts run out.
  }
  return receipt.attempts >= receipt.maxAttempts ? ('exhausted' as const) : null;
}

/**
 * After a failed transaction, read the receipt first: a lost commit response may hide a
 * completion. Only a still-owned claim gets a failure transition; if the read itself fails,
 * recovery is left to the lease. A failure transition that finds the claim gone reads the receipt
 * again: a COMMIT still in flight when the worker gave up holds the row's lock, so the read found
 * the claim owned, and the transition waited for that lock and found the receipt COMPLETED.
 */
async function settleFailure<TTx>(
  receipt: ClaimedReceipt,
  error: unknown,
  deps: ProcessDeps<TTx>,
  started: number,
): Promise<ProcessOutcome> {
  const base = { receiptId: receipt.id, consumer: receipt.consumer, attempt: receipt.attempts };
  try {
    const state = await deps.ops.readClaimState(receipt);
    if (state !== 'owned') return reconciled(state, receipt, deps, started);
    const stored = describeError(error, undefined, deps.redact);
    const observed = describeError(error, MAX_OBSERVED_ERROR_CHARS, deps.redact);
    const reason = deadReason(error, receipt);
    if (reason !== null) {
      if (!(await deps.ops.markDead(receipt, stored))) return await notOwned(receipt, deps, started);
      emit(deps, { type: 'dead', ...base, reason, error: observed });
      return 'dead';
    }
    const delayMs = retryDelayMs(receipt, deps);
    if (!(await deps.ops.scheduleRetry(receipt, delayMs, stored)))
      return await notOwned(receipt, deps, started);
    emit(deps, { type: 'retry', ...base, delayMs, error: observed });
    return 'retry';
  } catch (transitionError) {
    emitInfrastructure(deps, 'settle-failure', transitionError);
    return 'unresolved';
  }
}

/** The retry backoff of the receipt's attempt. */
function retryDelayMs<TTx>(receipt: ClaimedReceipt, deps: ProcessDeps<TTx>): number {
  return inboxRetryDelayMs(receipt.attempts, deps.worker.retryBaseMs, deps.worker.retryMaxMs, deps.random);
}

/** When a claim given back for want of a session is due, the outage having lasted `outageMs`. */
function outageDelayMs<TTx>(receipt: ClaimedReceipt, outageMs: number, deps: ProcessDeps<TTx>): number {
  const { retryBaseMs, retryMaxMs } = deps.worker;
  return inboxOutageDelayMs(receipt.attempts, outageMs, retryBaseMs, retryMaxMs, deps.random);
}

/** A failure transition found the claim gone: completed meanwhile (its COMMIT was in flight), or lost. */
async function notOwned<TTx>(
  receipt: ClaimedReceipt,
  deps: ProcessDeps<TTx>,
  started: number,
): Promise<ProcessOutcome> {
  const state = await deps.ops.readClaimState(receipt);
  return reconciled(state === 'owned' ? 'lost' : state, receipt, deps, started);
}

function reconciled<TTx>(
  state: 'completed' | 'lost',
  receipt: ClaimedReceipt,
  deps: ProcessDeps<TTx>,
  started: number,
): ProcessOutcome {
  if (state === 'completed') {
    emit(deps, completedEvent(receipt, started, true));
    return 'completed';
  }
  emit(deps, {
    type: 'lease-lost',
    receiptId: receipt.id,
    consumer: receipt.consumer,
    attempt: receipt.attempts,
  });
  return 'lease_lost';
}
