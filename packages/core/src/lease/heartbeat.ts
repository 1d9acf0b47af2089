import { FerryError } from '../errors';
import { LazyAbort } from '../lazyAbort';

/**
 * The one lease kit, used by the outbox relay and the inbox worker.
 *
 * A claim's lease is proven alive from the local time its claim (or last successful
 * renewal) was *sent*: the database set `lease_expires_at = now() + duration` no earlier
 * than that. The lease counts as lost locally once `duration - interval` has passed since
 * then, whatever a renewal is doing, so the holder stops one heartbeat interval before
 * another process can recover the row. Each renewal has a deadline (at most one interval,
 * never past the local expiry); a renewal that misses it counts as a failure and is
 * abandoned (its signal aborts), and the next beat sends a fresh one.
 *
 * An abandoned renewal may go on running, and `renew`'s promise settles only once it no longer
 * does (lease/renewalLock.ts, renewalStatement): on Prisma, which cannot abort a statement, it
 * keeps its pooled connection (or its place in the pool's queue) until the database answers; on
 * node-postgres (fromPg) its connection is closed, and the backend still running it is ended. Its
 * late answer, where `renew` still has it, counts: a success proves the lease from when that
 * renewal was sent, a claim found gone loses it. At most RENEWALS_IN_FLIGHT_AT_MOST renewals of
 * one lease run at once (the abandoned one and one fresh attempt), and no third is ever sent.
 * Without that bound a slow database (starved of CPU, a pool under pressure) stacked one more
 * renewal per beat per lease, each holding a connection the handlers and the renewals that would
 * prove the lease needed: up to (duration - interval) / interval per lease while it lasted. Not
 * one: a renewal stuck on a dead connection (one pooled connection silent, the others fine) would
 * keep a fresh one on a healthy connection from proving the lease. No bound across the leases of
 * one worker or relay: their number is bounded already (lanes, queued batches, batches in
 * flight), so renewals in flight are at most twice that, and a shared bound would let one lease's
 * stuck renewals starve the others' renewals.
 *
 * A beat that finds both unanswered waits for one of them to end, at most the deadline the
 * renewal it would send gets, and sends then; if neither ends by then, the beat counts as a failed
 * renewal (tolerance and expiry as above). Not at once: that counted a failure in the instant the
 * second renewal missed its deadline, two in one instant, so a stall the tolerance allowed before
 * the bound (renewals answered within `tolerance` intervals) lost the lease one interval early.
 *
 * stop() waits for the fresh renewal in flight, at most until its deadline, not for an
 * abandoned one (which may never answer); what either answers afterwards is ignored here, and a
 * `renew` that acts on its answer itself must ignore it too once its lease stopped
 * (inbox/claimQueue.ts: the queued claims close() gave back).
 */
export interface LeaseOptions {
  readonly durationMs: number;
  readonly intervalMs: number;
  /**
   * Consecutive failed renewals (error or missed deadline) after which the lease counts as
   * lost. Undefined: failures only end the lease through local expiry.
   */
  readonly tolerance?: number;
  /** Local time (`now()`) at which the claim statement was sent. */
  readonly claimedAt: number;
  /**
   * Extends the lease; resolves false when the claim is no longer held. `signal` aborts when
   * the kit gives up on it. Settles only once the renewal no longer runs, given up or not
   * (renewalStatement): the kit counts it in flight until then.
   */
  readonly renew: (signal: AbortSignal) => Promise<boolean>;
  /** Called once when the lease is lost; renewals have stopped by then. */
  readonly onLost: (loss: LeaseLoss) => void;
  /** A renewal failed or missed its deadline; the kit keeps renewing until tolerance or expiry. */
  readonly onError?: (error: unknown) => void;
  /** Monotonic milliseconds; default performance.now(). */
  readonly now?: () => number;
}

export type LeaseLossReason = 'taken_over' | 'renewal_failed' | 'expired';

export interface LeaseLoss {
  readonly reason: LeaseLossReason;
  readonly message: string;
}

export interface Lease {
  /** Aborts (reason: FerryError FERRY_LEASE_LOST) when the lease is lost. */
  readonly signal: AbortSignal;
  readonly lost: LeaseLoss | undefined;
  /** Local time the claim or its last successful renewal was sent: what the lease is proven from. */
  readonly provenAt: number;
  /**
   * Whether the lease is proven alive now. Past its local expiry it is lost now (onLost is
   * called, the signal aborts) rather than when its timer fires: a claim whose answer arrived
   * after the whole lease (a network that held it, a paused process) must not be acted on, as
   * another holder may have recovered it meanwhile (review 45).
   */
  check(): boolean;
  /**
   * Proves the lease from `sentAt` (local time), the send time of a statement other than its own
   * renewals that extended the same claim on the database and answered it held: the worker's
   * queue renewal in flight when it handed the claim to a lane (inbox/claimQueue.ts). Never moves
   * the proof earlier; ignored once the lease is lost or stopped (it then proves nothing: the
   * holder has let the claim go, as a late answer of its own renewals is then ignored).
   */
  prove(sentAt: number): void;
  /** Stops renewing; resolves once no renewal is in flight, bounded by that renewal's deadline. */
  stop(): Promise<void>;
}

type Settled = { kind: 'renewed'; owned: boolean } | { kind: 'failed'; error: unknown };

/** The abandoned renewal and one fresh attempt: see the kit's doc comment. */
export const RENEWALS_IN_FLIGHT_AT_MOST = 2;

/**
 * Runs one renewal against its deadline; a missed deadline aborts the renewal's signal.
 * `inTime`: its answer, or the missed deadline; `answer`: its answer whenever it comes.
 */
function renewWithin(
  renew: LeaseOptions['renew'],
  deadlineMs: number,
): { inTime: Promise<Settled | { kind: 'missed'; error: FerryError }>; answer: Promise<Settled> } {
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const missed = new Promise<{ kind: 'missed'; error: FerryError }>((resolve) => {
    timer = setTimeout(() => {
      const error = new FerryError('FERRY_TIMEOUT', `lease renewal missed its ${deadlineMs} ms deadline`);
      abort.abort(error);
      resolve({ kind: 'missed', error });
    }, deadlineMs);
  });
  const answer = Promise.resolve()
    .then(() => renew(abort.signal))
    .then(
      (owned): Settled => ({ kind: 'renewed', owned }),
      (error: unknown): Settled => ({ kind: 'failed', error }),
    );
  return { inTime: Promise.race([answer, missed]).finally(() => clearTimeout(timer)), answer };
}

export function startLease(options: LeaseOptions): Lease {
  const now = options.now ?? (() => performance.now());
  const lostSignal = new LazyAbort();
  let provenAt = options.claimedAt;
  let failures = 0;
  let stopped = false;
  let lost: LeaseLoss | undefined;
  let beatTimer: NodeJS.Timeout | undefined;
  let expiryTimer: NodeJS.Timeout | undefined;
  /** The renewal whose deadline has not passed (stop() waits for it). */
  let inflight: Promise<void> | undefined;
  /** Renewals sent and not answered, abandoned ones included. */
  let running = 0;
  /** A beat that found RENEWALS_IN_FLIGHT_AT_MOST running: called once one of them ends. */
  let waitingBeat: (() => void) | undefined;
  let slotTimer: NodeJS.Timeout | undefined;

  const expiresAt = (): number => provenAt + options.durationMs - options.intervalMs;
  const halt = (): void => {
    stopped = true;
    clearTimeout(beatTimer);
    clearTimeout(expiryTimer);
    clearTimeout(slotTimer);
    waitingBeat = undefined;
  };
  const lose = (reason: LeaseLossReason, message: string): void => {
    if (stopped) return;
    halt();
    lost = { reason, message };
    lostSignal.abort(new FerryError('FERRY_LEASE_LOST', message, { details: { reason } }));
    options.onLost(lost);
  };
  const expire = (): void =>
    lose('expired', `lease not renewed for ${options.durationMs - options.intervalMs} ms; counted as lost`);
  const armExpiry = (): void => {
    clearTimeout(expiryTimer);
    expiryTimer = setTimeout(expire, Math.max(0, expiresAt() - now()));
    expiryTimer.unref?.();
  };
  const failed = (error: unknown): void => {
    failures += 1;
    options.onError?.(error);
    if (options.tolerance !== undefined && failures >= options.tolerance) {
      const detail = error instanceof Error ? error.message : String(error);
      lose('renewal_failed', `lease renewal failed ${failures} time(s) in a row: ${detail}`);
    }
  };
  /** The claim was found held by a statement sent at `sentAt`: the lease is proven from then. */
  const prove = (sentAt: number): void => {
    if (stopped || sentAt <= provenAt) return;
    provenAt = sentAt;
    armExpiry();
  };
  /** A renewal's answer; `late`: its deadline had passed, which counted as its failure already. */
  const settle = (started: number, settled: Settled, late: boolean): void => {
    if (stopped) return;
    if (settled.kind === 'renewed' && settled.owned) {
      prove(started);
      failures = 0;
    } else if (settled.kind === 'renewed') {
      lose('taken_over', 'lease no longer held (expired and recovered, or taken over)');
    } else if (!late) {
      failed(settled.error);
    }
  };
  /** A renewal's deadline if sent at `started`: at most one interval, never past the local expiry. */
  const deadlineAt = (started: number): number =>
    Math.max(1, Math.min(options.intervalMs, expiresAt() - started));
  const send = (started: number): void => {
    const deadline = deadlineAt(started);
    const renewal = renewWithin(options.renew, deadline);
    running += 1;
    let deadlinePassed = false;
    let earlyAnswer: Settled | undefined;
    void renewal.answer.then((settled) => {
      running -= 1;
      if (deadlinePassed) settle(started, settled, true);
      else earlyAnswer = settled;
      waitingBeat?.();
    });
    const fresh = renewal.inTime.then((settled) => {
      if (inflight === fresh) inflight = undefined;
      if (settled.kind === 'missed') {
        deadlinePassed = true;
        failed(settled.error);
        // Answered in the moment between its deadline and this reaction: late all the same.
        if (earlyAnswer !== undefined) settle(started, earlyAnswer, true);
      } else {
        settle(started, settled, false);
      }
      schedule(started + options.intervalMs);
    });
    inflight = fresh;
  };
  const beat = (): void => {
    if (stopped) return;
    const started = now();
    if (started >= expiresAt()) return expire();
    // The expiry timer is armed by the first beat: most claims end before it, with one timer.
    if (expiryTimer === undefined) armExpiry();
    if (running < RENEWALS_IN_FLIGHT_AT_MOST) return send(started);
    // Both abandoned (a beat follows the fresh renewal's deadline): the next to end makes room.
    const waitMs = deadlineAt(started);
    waitingBeat = () => {
      waitingBeat = undefined;
      clearTimeout(slotTimer);
      beat();
    };
    slotTimer = setTimeout(() => {
      waitingBeat = undefined;
      failed(
        new FerryError(
          'FERRY_TIMEOUT',
          `lease renewal not sent: the last ${running} renewals of this lease are still unanswered after ${waitMs} ms more`,
        ),
      );
      schedule(started + options.intervalMs);
    }, waitMs);
    slotTimer.unref?.();
  };
  const schedule = (at: number): void => {
    if (stopped) return;
    beatTimer = setTimeout(beat, Math.max(0, at - now()));
    beatTimer.unref?.();
  };

  // One timer until the first beat (or the expiry, if that comes first; beat() then loses it).
  schedule(options.claimedAt + Math.min(options.intervalMs, options.durationMs - options.intervalMs));
  return {
    get signal() {
      return lostSignal.signal;
    },
    get lost() {
      return lost;
    },
    get provenAt() {
      return provenAt;
    },
    check() {
      if (lost === undefined && !stopped && now() >= expiresAt()) expire();
      return lost === undefined;
    },
    prove,
    async stop() {
      halt();
      await inflight;
    },
  };
}
