import type { ConfirmChannel } from 'amqplib';
import type { Entry } from './batch';

/**
 * Buffers deliveries and settles them in batches of at most `maxBatchSize`, up to
 * `maxInFlight` batches at once: deliveries that arrive while every slot is busy form the
 * next batch when one frees. RabbitMQ takes acks in any order and each delivery is acked on
 * its own channel, so the batches settle independently of one another.
 *
 * A free slot is not filled with the first few deliveries of a burst: the buffer waits, one
 * event-loop turn at a time, while deliveries keep arriving and it holds less than its share
 * of a batch (maxBatchSize / maxInFlight). Without that, the deliveries the broker sends after
 * an ack (in several socket reads) split into a small batch and a remainder, each paying an
 * acceptance statement and a commit. A lone delivery waits one turn; no timer is involved.
 */
export class DeliveryBuffer {
  private readonly entries: Entry[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly share: number;
  private scheduled = false;
  /** A delivery arrived since the last scheduled turn. */
  private arrived = false;
  private idle: (() => void)[] = [];

  constructor(
    private readonly maxBatchSize: number,
    private readonly maxInFlight: number,
    private readonly settle: (batch: readonly Entry[]) => Promise<void>,
  ) {
    this.share = Math.ceil(maxBatchSize / maxInFlight);
  }

  push(entry: Entry): void {
    this.entries.push(entry);
    this.arrived = true;
    // One turn first, so the deliveries of one read from the socket go as one batch.
    this.schedule();
  }

  /**
   * A turn only for deliveries buffered: a batch settling with none behind it (one close() gave up
   * on, answered after close() resolved) schedules nothing (review 150: an Immediate fired after).
   */
  private schedule(): void {
    if (this.scheduled || this.entries.length === 0 || this.inFlight.size >= this.maxInFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.filling()) {
        this.arrived = false;
        this.schedule();
      } else this.launch();
    });
  }

  /** Whether to wait a turn for more deliveries before filling a free slot. */
  private filling(): boolean {
    return this.arrived && this.entries.length > 0 && this.entries.length < this.share;
  }

  /** Deliveries buffered from a closed channel cannot be acked any more; the broker redelivers them. */
  dropChannel(channel: ConfirmChannel): void {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      if (this.entries[i]!.channel === channel) this.entries.splice(i, 1);
    }
    this.wakeIdle();
  }

  /** Resolves when every batch in flight and everything buffered behind them are settled. */
  drained(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private isIdle(): boolean {
    return this.inFlight.size === 0 && this.entries.length === 0 && !this.scheduled;
  }

  private wakeIdle(): void {
    if (!this.isIdle()) return;
    const waiting = this.idle;
    this.idle = [];
    for (const resolve of waiting) resolve();
  }

  /** Starts batches from the buffer while a slot is free, unless it is still filling. */
  private launch(): void {
    this.arrived = false;
    while (this.entries.length > 0 && this.inFlight.size < this.maxInFlight) {
      const batch = this.entries.splice(0, this.maxBatchSize);
      const run: Promise<void> = this.settle(batch).finally(() => {
        this.inFlight.delete(run);
        this.schedule();
        this.wakeIdle();
      });
      this.inFlight.add(run);
    }
    this.wakeIdle();
  }
}
