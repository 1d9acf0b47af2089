export interface HeartbeatOptions {
  readonly intervalMs: number;
  /** Renews the lease; resolves false when the claim is lost. */
  readonly renew: () => Promise<boolean>;
  /** Called once when a renewal reports the claim lost; the heartbeat stops. */
  readonly onLost: () => void;
  /** A renewal failed (database error); the heartbeat keeps trying until the lease is lost. */
  readonly onError: (error: unknown) => void;
}

export interface Heartbeat {
  stop(): void;
}

/**
 * Renews a lease every `intervalMs` (chained timers, never overlapping renewals). Renewal
 * succeeds only for an owned, unexpired lease, so after a takeover it reports loss.
 */
export function startHeartbeat(options: HeartbeatOptions): Heartbeat {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => void beat(), options.intervalMs);
    timer.unref?.();
  };
  const beat = async (): Promise<void> => {
    if (stopped) return;
    try {
      const owned = await options.renew();
      if (stopped) return;
      if (!owned) {
        stopped = true;
        options.onLost();
        return;
      }
    } catch (error) {
      if (stopped) return;
      options.onError(error);
    }
    schedule();
  };
  schedule();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
