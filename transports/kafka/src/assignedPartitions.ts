/** A group assignment: the partitions of each topic a member got. */
export type Assignment = Readonly<Record<string, readonly number[]>>;

/** The `topic:partition` keys of an assignment, as the consumer keys its per-partition state. */
export function partitionKeys(assignment: Assignment): Set<string> {
  return new Set(
    Object.entries(assignment).flatMap(([topic, partitions]) =>
      partitions.map((partition) => `${topic}:${partition}`),
    ),
  );
}

/**
 * A (re)join: what a member keeps per partition belongs to its ownership of the partition, so
 * the entries of partitions the assignment did not give it are another member's now and are
 * dropped from every map.
 */
export function forgetUnassigned(assignment: Assignment, maps: ReadonlyArray<Map<string, unknown>>): void {
  const assigned = partitionKeys(assignment);
  for (const map of maps) {
    for (const partitionKey of map.keys()) if (!assigned.has(partitionKey)) map.delete(partitionKey);
  }
}
