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
 * abandoned (its signal aborts). stop() waits for a renewal in flight, at most until its
 * deadline.
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
  /** Extends the lease; resolves false when the claim is no longer held. */
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
  /** Stops renewing; resolves once no renewal is in flight, bounded by that renewal's deadline. */
  stop(): Promise<void>;
}

type Settled = { kind: 'renewed'; owned: boolean } | { kind: 'failed'; error: unknown };

/** Runs one renewal against its deadline; a missed deadline aborts the renewal's signal. */
function renewWithin(renew: LeaseOptions['renew'], deadlineMs: number): Promise<Settled> {
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const missed = new Promise<Settled>((resolve) => {
    timer = setTimeout(() => {
      const error = new FerryError('FERRY_TIMEOUT', `lease renewal missed its ${deadlineMs} ms deadline`);
      abort.abort(error);
      resolve({ kind: 'failed', error });
    }, deadlineMs);
  });
  const settled = Promise.resolve()
    .then(() => renew(abort.signal))
    .then(
      (owned): Settled => ({ kind: 'renewed', owned }),
      (error: unknown): Settled => ({ kind: 'failed', error }),
    );
  return Promise.race([settled, missed]).finally(() => clearTimeout(timer));
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
  let inflight: Promise<void> | undefined;

  const expiresAt = (): number => provenAt + options.durationMs - options.intervalMs;
  const halt = (): void => {
    stopped = true;
    clearTimeout(beatTimer);
    clearTimeout(expiryTimer);
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
  const settle = (started: number, settled: Settled): void => {
    if (stopped) return;
    if (settled.kind === 'renewed' && settled.owned) {
      provenAt = Math.max(provenAt, started);
      failures = 0;
      armExpiry();
    } else if (settled.kind === 'renewed') {
      lose('taken_over', 'lease no longer held (expired and recovered, or taken over)');
      return;
    } else {
      failures += 1;
      options.onError?.(settled.error);
      if (options.tolerance !== undefined && failures >= options.tolerance) {
        const detail = settled.error instanceof Error ? settled.error.message : String(settled.error);
        lose('renewal_failed', `lease renewal failed ${failures} time(s) in a row: ${detail}`);
        return;
      }
    }
    schedule(started + options.intervalMs);
  };
  const beat = (): void => {
    if (stopped) return;
    const started = now();
    if (started >= expiresAt()) return expire();
    // The expiry timer is armed by the first beat: most claims end before it, with one timer.
    if (expiryTimer === undefined) armExpiry();
    const deadline = Math.max(1, Math.min(options.intervalMs, expiresAt() - started));
    inflight = renewWithin(options.renew, deadline).then((settled) => {
      inflight = undefined;
      settle(started, settled);
    });
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
    async stop() {
      halt();
      await inflight;
    },
  };
}
