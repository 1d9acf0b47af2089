import type { InboxAcceptor } from '../contracts';
import { ConsumerDisconnectedError, FerryConfigError, FerryError } from '../errors';
import { knownKeysOption, received, requiredOptions, timerOption } from '../optionChecks';
import { closedError, describeCause } from './errors';
import { onAbort } from '../deadline';

export interface ReadyOptions {
  /** How long ready() waits for the consumer to attach. Default 60,000 ms. */
  timeoutMs?: number;
}

export const DEFAULT_READY_TIMEOUT_MS = 60_000;

/**
 * Every transport's attach function calls this first, with its two arguments as given: the inbox
 * must be one (an InboxAcceptor: acceptMany()) and the options an object, else FerryConfigError
 * naming `inbox` or `options` (left out, `undefined` from a configuration, they were a TypeError
 * here or at the first delivery); then an inbox that has handlers refuses a consumer name none of
 * them takes (FERRY_HANDLER_MISSING), instead of accepting deliveries that would sit PENDING for
 * ever. `needs` names the options the transport requires, for the error. `resolve` is the
 * transport's own check of the options (knownKeysOption first: a snapshot, each option read once);
 * the consumer name checked against the handlers is the one it returns, the name the consumer
 * then uses, never a second read of the options (review 142: a getter could answer a handled
 * name here and another to the consumer). Returns what `resolve` returned.
 */
export function checkAttachable<R extends { readonly consumer: string }>(
  acceptor: InboxAcceptor,
  options: unknown,
  needs: string,
  resolve: () => R,
): R {
  const inbox = acceptor as Partial<InboxAcceptor> | null | undefined;
  if (typeof inbox !== 'object' || inbox === null || typeof inbox.acceptMany !== 'function') {
    throw new FerryConfigError(
      'inbox',
      `must be an inbox (an InboxAcceptor with acceptMany(), such as createInbox's), got ${received(acceptor)}`,
    );
  }
  requiredOptions(options, needs);
  const resolved = resolve();
  acceptor.assertHandles?.(resolved.consumer);
  return resolved;
}

/**
 * What a consumer that had attached lost: its connection to the broker, or only its channel (a
 * RabbitMQ channel the broker closed: a precondition failed, its queue was deleted), the connection
 * still up, or its group session (a Kafka session that ended for another reason than a lost
 * connection: a batch the client cannot decompress). check() says which, so an operator looks
 * where the failure is.
 */
export type LostPart = 'connection' | 'channel' | 'session';

const LOST_TEXT: Record<LostPart, string> = {
  connection: 'its connection',
  channel: 'its channel (its connection is up)',
  session: 'its group session',
};

/**
 * What a consumer's attempts to attach have met so far: for ready(), the last failure (named in
 * ready()'s FERRY_TIMEOUT, and its cause) and a refusal, a failure retrying cannot fix without an
 * operator (the broker refused the consumer's topology or its permissions), which ready() reports
 * at once instead of after its whole timeout; for check(), whether the consumer is attached now.
 * The consumer keeps trying to attach either way.
 */
export class AttachAttempts {
  private lastFailure: unknown = undefined;
  private refusal: FerryError | null = null;
  /** ready() resolves once the consumer attached the first time: refusals after it reject none. */
  private attachedOnce = false;
  /** Whether the consumer is attached now: from attached() to the next failed(), refused() or lost(). */
  private attachedNow = false;
  /** What the consumer lost since it was last attached (check() names it). */
  private lostPart: LostPart = 'connection';
  private readonly listeners = new Set<(refusal: FerryError) => void>();

  /** An attempt failed; the consumer retries. A refusal before it no longer describes it. */
  failed(error: unknown): void {
    this.attachedNow = false;
    this.lastFailure = error;
    this.refusal = null;
  }

  /**
   * An attempt failed in a way only an operator can fix; the consumer still retries. Once the
   * consumer attached, a refusal (met re-attaching) is only the last failure.
   */
  refused(refusal: FerryError): void {
    this.attachedNow = false;
    this.lastFailure = refusal;
    if (this.attachedOnce) return;
    this.refusal = refusal;
    for (const listener of this.listeners) listener(refusal);
  }

  /**
   * The consumer lost its connection, or only its channel (the broker closed the channel, the
   * connection is up) or its group session (LostPart), after it attached (`error`: why); it is not attached until attached()
   * again. check() names what was lost: the last one reported until the consumer attaches.
   */
  lost(error: unknown, part: LostPart = 'connection'): void {
    this.attachedNow = false;
    this.lastFailure = error;
    this.lostPart = part;
  }

  /** The consumer attached: earlier failures no longer describe it. */
  attached(): void {
    this.attachedOnce = true;
    this.attachedNow = true;
    this.lostPart = 'connection';
    this.lastFailure = undefined;
    this.refusal = null;
  }

  get last(): unknown {
    return this.lastFailure;
  }

  /** Whether the consumer is attached now (consuming): what check() answers. */
  get isAttached(): boolean {
    return this.attachedNow;
  }

  /** Whether the consumer attached at least once (since then ready() resolves). */
  get hasAttached(): boolean {
    return this.attachedOnce;
  }

  /** What the consumer lost since it was last attached (meaningful once it has attached). */
  get whatLost(): LostPart {
    return this.lostPart;
  }

  /**
   * Calls `listener` once with the refusal: on the next microtask when there is one already
   * (never inside this call), else when one comes. The result stops listening.
   */
  onRefusal(listener: (refusal: FerryError) => void): () => void {
    const current = this.refusal;
    if (current !== null) {
      queueMicrotask(() => listener(current));
      return () => undefined;
    }
    const once = (refusal: FerryError) => {
      this.listeners.delete(once);
      listener(refusal);
    };
    this.listeners.add(once);
    return () => this.listeners.delete(once);
  }
}

/**
 * ready() of every transport's consumer: resolves when `ready` does; rejects with FERRY_CLOSED
 * once `closed` aborts, with the refusal of `attempts` as soon as there is one, and with
 * FERRY_TIMEOUT (retriable; naming the last failed attempt, its cause) after `timeoutMs`, e.g.
 * while the broker is unreachable. The consumer keeps trying to attach after either.
 */
export function awaitReady(
  what: string,
  ready: Promise<void>,
  closed: AbortSignal,
  options: ReadyOptions = {},
  attempts?: AttachAttempts,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    // Inside the executor, so a bad option rejects like every other ready() failure.
    options = knownKeysOption('', options, ['timeoutMs']);
    const timeoutMs = timerOption('timeoutMs', options.timeoutMs ?? DEFAULT_READY_TIMEOUT_MS, 0);
    if (closed.aborted) {
      reject(closedError(what));
      return;
    }
    const timer = setTimeout(
      () => finish(() => reject(timedOut(what, timeoutMs, attempts?.last))),
      timeoutMs,
    );
    timer.unref();
    const stopRefusals = attempts?.onRefusal((refusal) => finish(() => reject(refusal)));
    // Through onAbort and onSettled: a call that ended keeps nothing on the consumer's signal or
    // ready promise, and many waiting calls hold one listener on each.
    const stopClosed = onAbort(closed, () => finish(() => reject(closedError(what))));
    const stopWaiting = onSettled(ready, (settled) =>
      finish(settled.ok ? resolve : () => reject(settled.error)),
    );
    function finish(settle: () => void): void {
      clearTimeout(timer);
      stopClosed();
      stopRefusals?.();
      stopWaiting();
      settle();
    }
  });
}

type Settled = { readonly ok: true } | { readonly ok: false; readonly error: unknown };

/** The ready() calls waiting on each consumer's ready promise, and the one reaction they share on it. */
const readyWaiters = new WeakMap<Promise<void>, Set<(settled: Settled) => void>>();

/**
 * Calls `listener` once `promise` settles, until the returned stop is called (when the ready() call
 * ended otherwise). However many calls wait on one consumer's promise, it holds one reaction of
 * ferry's: a reaction per call stayed, with that call's closure and promise, until the consumer
 * attached, so a probe calling ready() with a short timeout on a consumer that never attached
 * gathered one more per call for the consumer's whole life (review 102). The shape of onAbort's.
 */
function onSettled(promise: Promise<void>, listener: (settled: Settled) => void): () => void {
  const calls = readyWaiters.get(promise) ?? waitersOn(promise);
  calls.add(listener);
  return () => void calls.delete(listener);
}

/** The shared reaction, made apart from onSettled: a closure there would hold its first caller's listener. */
function waitersOn(promise: Promise<void>): Set<(settled: Settled) => void> {
  const calls = new Set<(settled: Settled) => void>();
  const fire = (settled: Settled): void => {
    readyWaiters.delete(promise);
    for (const call of [...calls]) if (calls.delete(call)) call(settled);
  };
  promise.then(
    () => fire({ ok: true }),
    (error: unknown) => fire({ ok: false, error }),
  );
  readyWaiters.set(promise, calls);
  return calls;
}

/**
 * check() of every transport's consumer, its readiness probe: resolves while `attempts` says the
 * consumer is attached; rejects with FERRY_CLOSED once `closed` aborted, else with
 * ConsumerDisconnectedError (FERRY_TRANSPORT_ERROR, retriable) naming `what` (the consumer:
 * transport, name, queue or group) and why: it has not attached yet, or it lost its connection
 * (or only its channel: LostPart) and has not re-attached, with the last failure (also the error's
 * cause). Answers at once: it
 * waits for nothing (ready() is the start-up gate that waits for the first attach).
 */
export function checkAttached(what: string, closed: AbortSignal, attempts: AttachAttempts): Promise<void> {
  if (closed.aborted) return Promise.reject(closedError(what));
  if (attempts.isAttached) return Promise.resolve();
  const last = attempts.last;
  const reason = attempts.hasAttached
    ? `it lost ${LOST_TEXT[attempts.whatLost]} and has not re-attached${last === undefined ? '' : `; the last failure: ${describeCause(last)}`}`
    : `it has not attached yet${last === undefined ? '' : `; the last attempt failed: ${describeCause(last)}`}`;
  return Promise.reject(new ConsumerDisconnectedError(what, reason, last));
}

function timedOut(what: string, timeoutMs: number, lastFailure: unknown): FerryError {
  const last = lastFailure === undefined ? '' : `; the last attempt failed: ${describeCause(lastFailure)}`;
  return new FerryError('FERRY_TIMEOUT', `${what} was not ready within ${timeoutMs} ms${last}`, {
    details: { timeoutMs },
    ...(lastFailure === undefined ? {} : { cause: lastFailure }),
  });
}
