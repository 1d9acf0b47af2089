import type { ConsumerEmitter } from '@ferry/core/transport';
import { forgetUnassigned, type Assignment } from './assignedPartitions';

/** How often the lag of the partitions this member committed is reported again without a commit. */
export const LAG_REPORT_INTERVAL_MS = 5_000;

/** Where a partition's high watermark is read from: the client's last fetch of it, or null. */
export type HighWatermarkSource = (topic: string, partition: number) => string | null;

interface Committed {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
}

/**
 * The one home of the `lag` event: the partition's high watermark minus this member's committed
 * offset, reported after each commit and again every LAG_REPORT_INTERVAL_MS (one timer, started
 * with the consumer, stopped by close) from the high watermark of the client's latest fetch.
 * A partition that delivers nothing (held behind a transaction another producer left open: a
 * read_committed fetch returns no record past its last stable offset) thus shows its lag
 * growing instead of keeping the value of its last commit. Partitions this member has not
 * committed since it joined are not reported (their committed offset is not known here).
 */
export class LagReport {
  private readonly committed = new Map<string, Committed>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly groupId: string,
    private readonly emit: ConsumerEmitter,
  ) {}

  /** Starts the periodic report; `highWatermark` reads the running session's client (null: none). */
  start(highWatermark: () => HighWatermarkSource | null): void {
    this.timer ??= setInterval(() => {
      // A timer's callback that throws is an uncaught exception: a value the client holds that is
      // no offset (BigInt throws) must not end the process; the next commit reports again.
      try {
        const source = highWatermark();
        if (source === null) return;
        for (const { topic, partition, offset } of this.committed.values())
          this.report(topic, partition, offset, source(topic, partition));
      } catch {
        // Nothing to report this time.
      }
    }, LAG_REPORT_INTERVAL_MS);
    this.timer.unref();
  }

  /** `partition` of `topic` committed through `offset` (the next to read): its lag reported. */
  committedThrough(topic: string, partition: number, offset: string, highWatermark: string | null): void {
    this.committed.set(`${topic}:${partition}`, { topic, partition, offset });
    this.report(topic, partition, offset, highWatermark);
  }

  /** A (re)join: the partitions this member no longer owns are not reported any more. */
  assigned(assignment: Assignment): void {
    forgetUnassigned(assignment, [this.committed]);
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.committed.clear();
  }

  private report(topic: string, partition: number, offset: string, highWatermark: string | null): void {
    if (highWatermark === null) return;
    const lag = BigInt(highWatermark) - BigInt(offset);
    this.emit({ type: 'lag', group: this.groupId, partition, lag: lag > 0n ? Number(lag) : 0 }, topic);
  }
}
