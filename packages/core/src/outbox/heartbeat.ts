/**
 * Renews a batch's lease every `intervalMs` while it is being published. The lease is
 * lost when a renewal finds no row still held (another relay recovered it) or after
 * `tolerance` consecutive renewal errors; `onLost` then runs once and renewals stop.
 */
export class Heartbeat {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private failures = 0;
  private stopped = false;

  constructor(
    private readonly renew: () => Promise<number>,
    private readonly options: { intervalMs: number; tolerance: number },
    private readonly onLost: (reason: string) => void,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      if (!this.running && !this.stopped)
        this.running = this.beat().finally(() => (this.running = undefined));
    }, this.options.intervalMs);
  }

  private async beat(): Promise<void> {
    try {
      const renewed = await this.renew();
      if (this.stopped) return;
      if (renewed === 0) this.lose('lease no longer held (expired and recovered, or taken over)');
      else this.failures = 0;
    } catch (error) {
      if (this.stopped) return;
      this.failures += 1;
      if (this.failures >= this.options.tolerance) {
        const message = error instanceof Error ? error.message : String(error);
        this.lose(`heartbeat failed ${this.failures} time(s) in a row: ${message}`);
      }
    }
  }

  private lose(reason: string): void {
    this.stopped = true;
    clearInterval(this.timer);
    this.onLost(reason);
  }

  /** Stops renewing and waits for a renewal in flight, so it cannot race the completion. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }
}
