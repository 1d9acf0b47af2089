import type { ConsumedRecord } from './client/types';
import { forgetUnassigned, type Assignment } from './assignedPartitions';

/**
 * What a consumer counts as received (`received` events), per partition (`topic:partition`):
 * each offset once while the consumer owns the partition. A partition sought back (a held or
 * failed chunk), or read again from its committed offset after a rejoin, hands over records
 * the consumer already received; a re-read is no new receipt.
 */
export class ReceivedOffsets {
  /** The highest offset of each partition counted. */
  private readonly through = new Map<string, bigint>();

  /** How many of a fetched batch's records were not counted before; counts them. */
  count(partitionKey: string, records: readonly ConsumedRecord[]): number {
    const before = this.through.get(partitionKey);
    let highest = before;
    let count = 0;
    for (const record of records) {
      const offset = BigInt(record.offset);
      if (before !== undefined && offset <= before) continue;
      count += 1;
      if (highest === undefined || offset > highest) highest = offset;
    }
    if (highest !== undefined) this.through.set(partitionKey, highest);
    return count;
  }

  /** A (re)join: the partitions it did not assign are another member's; what they received is forgotten. */
  keepAssigned(assignment: Assignment): void {
    forgetUnassigned(assignment, [this.through]);
  }
}
