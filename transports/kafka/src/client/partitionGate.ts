/**
 * Per-partition pause and seek for a client that streams every assigned partition and has
 * neither (@platformatic/kafka): a paused partition's records are not admitted, and after a seek
 * none is until the sought offset arrives, or the first record of a fetch that started there
 * (`fetched`: the sought offset may be gone from the log, compacted or trimmed, or hold a
 * transaction marker; review 42 found a partition stalled for ever on a compacted offset). A
 * record past the sought offset otherwise means a fetch that was in flight moved the partition's
 * fetch position forward again, so it is moved back once more.
 */
export class PartitionGate {
  private readonly paused = new Set<string>();
  private readonly seeks = new Map<string, bigint>();
  /** The first record a fetch from the sought offset returned, when not the sought offset itself. */
  private readonly firstFetched = new Map<string, bigint>();

  /** `moveFetchPosition(key, offset)` sets where the stream fetches the partition `key` next. */
  constructor(private readonly moveFetchPosition: (key: string, offset: bigint) => void) {}

  pause(key: string): void {
    this.paused.add(key);
  }

  resume(key: string): void {
    this.paused.delete(key);
    const sought = this.seeks.get(key);
    if (sought !== undefined) this.moveFetchPosition(key, sought);
  }

  seek(key: string, offset: bigint): void {
    this.seeks.set(key, offset);
    this.firstFetched.delete(key);
    this.moveFetchPosition(key, offset);
  }

  /**
   * A fetch of partition `key` from `fetchOffset` was answered (before its records are read):
   * `first` is its first record at or after that offset, `next` where the partition's next fetch
   * starts (undefined: the answer held nothing). For a fetch from the sought offset, `first` is
   * admitted as the sought offset would be; an answer with nothing at or after it but markers
   * moves the seek to `next`, where the following fetch starts.
   */
  fetched(key: string, fetchOffset: bigint, first: bigint | undefined, next: bigint | undefined): void {
    const sought = this.seeks.get(key);
    if (sought === undefined || fetchOffset !== sought) return;
    if (first !== undefined) this.firstFetched.set(key, first);
    else if (next !== undefined && next > sought) this.seeks.set(key, next);
  }

  /** True while a seek of the partition waits for its offset. */
  seeking(key: string): boolean {
    return this.seeks.has(key);
  }

  /** Whether the record at `offset` of partition `key` may be handed over. */
  admit(key: string, offset: bigint): boolean {
    if (this.paused.has(key)) return false;
    const sought = this.seeks.get(key);
    if (sought === undefined) return true;
    if (offset === sought || offset === this.firstFetched.get(key)) {
      this.seeks.delete(key);
      this.firstFetched.delete(key);
      return true;
    }
    if (offset > sought) this.moveFetchPosition(key, sought);
    return false;
  }
}
