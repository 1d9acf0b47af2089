/** Partition counts by topic. */
export type PartitionCounts = ReadonlyMap<string, number>;

/**
 * Reads the consumed topics' partition counts every `intervalMs` while this member leads its
 * group, and calls `rejoin` once a topic has more than at the group's last join: a client that
 * assigns partitions at a join only (@platformatic/kafka) would otherwise never read a partition
 * added to a consumed topic while its members run. The leader's rejoin makes the group
 * rebalance, as the Java client's leader does on a metadata change; the new assignment, computed
 * from fresh metadata, holds the new partition.
 */
export class PartitionWatch {
  private known: PartitionCounts = new Map();
  private leading = false;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  /**
   * A read is in flight: a tick skips (review 107). A read lasts up to the client's request
   * timeout times its retries, which is what bounds it; ticks did pile up reads meanwhile.
   */
  private reading = false;

  constructor(
    private readonly intervalMs: number,
    /** Fresh partition counts of the consumed topics. */
    private readonly read: () => Promise<PartitionCounts>,
    private readonly rejoin: () => void,
  ) {}

  /** The group was joined: `counts` are those of the metadata its assignment was computed from. */
  joined(leader: boolean, counts: PartitionCounts): void {
    this.known = counts;
    this.leading = leader;
    if (this.stopped || this.timer !== null) return;
    this.timer = setInterval(() => void this.check(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private async check(): Promise<void> {
    if (!this.leading || this.reading) return;
    const known = this.known;
    let counts: PartitionCounts;
    this.reading = true;
    try {
      counts = await this.read();
    } catch {
      return; // the client's own requests report an outage; the next check reads again
    } finally {
      this.reading = false;
    }
    if (this.stopped || this.known !== known) return; // a join meanwhile brought its own counts
    const grown = [...counts].some(([topic, count]) => count > (known.get(topic) ?? count));
    if (!grown) return;
    this.known = counts;
    this.rejoin();
  }
}
