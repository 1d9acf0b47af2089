/**
 * Per-partition pause and seek for a client that streams every assigned partition and has
 * neither (@platformatic/kafka): a paused partition's records are not admitted, and after a seek
 * none is until the sought offset arrives. A record past the sought offset means a fetch that was
 * in flight moved the partition's fetch position forward again, so it is moved back once more.
 */
export class PartitionGate {
  private readonly paused = new Set<string>();
  private readonly seeks = new Map<string, bigint>();

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
    this.moveFetchPosition(key, offset);
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
    if (offset === sought) {
      this.seeks.delete(key);
      return true;
    }
    if (offset > sought) this.moveFetchPosition(key, sought);
    return false;
  }
}
