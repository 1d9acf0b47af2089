/**
 * "Once close() resolved, nothing of the object runs any more", watched from the process: no timer
 * of the object fires, no socket of it opens or connects, no line reaches its logger, no event its
 * observer (every transport's publisher and consumer, the relay, the inbox worker).
 *
 * What is the object's: every async resource made while `own()` runs (its construction, every call
 * on it) or from one of those, as AsyncLocalStorage passes its store on (a socket's callbacks make
 * theirs in the socket's). A timer a client library sets deep inside a retry is the object's too,
 * whichever code set it. Things the test made outside `own()` (its pools, proxies, deadlines) are not.
 *
 * The watch after close() ends on events, not on a time: once no timer of the object is pending
 * (each fired or was cleared), or at `windowMs` at the latest, when what is still pending is named.
 */
import { AsyncLocalStorage, createHook } from 'node:async_hooks';
import pino from 'pino';
import { outcomeWithin } from './deadlines';

/** Resource types that are a connection being opened (a new socket, a connect request). */
const OPENING = new Set(['TCPWRAP', 'TCPCONNECTWRAP', 'TLSWRAP', 'GETADDRINFOREQWRAP', 'PIPEWRAP']);
/** Resource types that are a timer (setTimeout / setInterval, setImmediate). */
const TIMERS = new Set(['Timeout', 'Immediate']);

/** The report of an object of which nothing ran after close() resolved. */
export const NOTHING_AFTER_CLOSE: AfterCloseReport = { closed: 'resolved', ran: [], pending: [] };

/** What of the object ran after its close() resolved, and what it left pending. */
export interface AfterCloseReport {
  /** How close() ended: 'resolved', 'hung' (past its deadline), or its rejection. */
  readonly closed: 'resolved' | 'hung' | { readonly rejected: string };
  /** Each thing of the object that ran after close() resolved, named (e.g. `timer fired, set at ...`). */
  readonly ran: readonly string[];
  /** Timers of the object still pending when the watch ended (windowMs reached), each with where it was set. */
  readonly pending: readonly string[];
}

export interface AfterClose {
  /** Runs `fn` as the object's: whatever it (or a callback of what it makes) schedules is the object's. */
  own<T>(fn: () => T): T;
  /** A logger recording every line (every level): give it to the object; a line after close() is reported. */
  readonly logger: pino.Logger;
  /** An observer: give it to the object; an event after close() is reported (`forward` sees every event). */
  observer<E extends { readonly type: string }>(forward?: (event: E) => void): (event: E) => void;
  /** The TCP connects the object started so far (its connect attempts, a closed port's too). */
  connects(): number;
  /** The log lines (messages) recorded so far, for the test's own checks. */
  readonly lines: readonly string[];
  /**
   * Awaits `closing` (the object's close()) for at most `deadlineMs`, then watches until no timer
   * of the object is pending, for at most `windowMs`; stops watching. Call once.
   */
  watch(
    closing: Promise<unknown>,
    options: { readonly deadlineMs: number; readonly windowMs: number },
  ): Promise<AfterCloseReport>;
  /** watch() of `close()` called as the object's. */
  close(
    close: () => Promise<unknown>,
    options: { readonly deadlineMs: number; readonly windowMs: number },
  ): Promise<AfterCloseReport>;
  /** Stops watching (idempotent; watch() calls it). */
  stop(): void;
}

/** The first frames of the current stack outside Node and this file: where a timer was set. */
function callSite(): string {
  const frames = (new Error().stack ?? '').split('\n').slice(1);
  const own = frames.filter((frame) => !/node:|afterClose\.ts|<anonymous>|node_modules\/jest/.test(frame));
  return own
    .slice(0, 4)
    .map((frame) => frame.trim().replace(/^at /, ''))
    .join(' < ');
}

/** Starts watching one object (call before it is made; make it inside own()). */
export function watchAfterClose(): AfterClose {
  const owner = new AsyncLocalStorage<true>();
  /** The object's timers not fired-and-done nor cleared yet, by async id: where each was set. */
  const timers = new Map<number, string>();
  const ran: string[] = [];
  const lines: string[] = [];
  let closed = false;
  let connects = 0;
  const hook = createHook({
    init: (id, type) => {
      if (owner.getStore() !== true) return;
      if (type === 'TCPCONNECTWRAP') connects += 1;
      if (TIMERS.has(type)) timers.set(id, `${type} set at ${callSite()}`);
      if (closed && OPENING.has(type)) ran.push(`${type} made at ${callSite()}`);
    },
    before: (id) => {
      const timer = timers.get(id);
      if (closed && timer !== undefined) ran.push(`${timer} fired`);
    },
    destroy: (id) => void timers.delete(id),
  }).enable();
  const logger = pino(
    { level: 'trace' },
    {
      write: (line: string) => {
        const msg = String((JSON.parse(line) as { msg?: unknown }).msg);
        lines.push(msg);
        if (closed) ran.push(`log line: ${msg}`);
      },
    },
  );
  const stop = () => void hook.disable();
  return {
    own: (fn) => owner.run(true, fn),
    logger,
    lines,
    connects: () => connects,
    observer:
      <E extends { readonly type: string }>(forward?: (event: E) => void) =>
      (event: E) => {
        if (closed) ran.push(`observer event: ${event.type}`);
        forward?.(event);
      },
    stop,
    close(close, options) {
      return this.watch(owner.run(true, close), options);
    },
    async watch(closing, { deadlineMs, windowMs }) {
      const outcome = await outcomeWithin(closing, deadlineMs);
      closed = true;
      const until = Date.now() + windowMs;
      try {
        // A few turns at least (a callback queued as close() resolved), then until no timer is pending.
        for (let turn = 0; turn < 3 || (timers.size > 0 && Date.now() < until); turn += 1) {
          await new Promise((resolve) => setTimeout(resolve, turn < 3 ? 0 : 20));
        }
      } finally {
        stop();
      }
      return {
        closed:
          outcome === 'hung'
            ? 'hung'
            : 'value' in outcome
              ? 'resolved'
              : { rejected: String((outcome.error as Error)?.message ?? outcome.error) },
        ran,
        pending: [...timers.values()],
      };
    },
  };
}
