/**
 * What a fault scenario counts. Every suite prints one ledger per scenario and fails unless
 * nothing was lost, nothing was applied twice and nothing is stuck after recovery.
 */
export interface Ledger {
  /** Messages the scenario sent towards ferry (including deliberate duplicates). */
  offered: number;
  /** Distinct messages ferry stored (inbox receipts or outbox rows). */
  accepted: number;
  /** Redeliveries and deliberate duplicates that ferry recognised and did not store again. */
  duplicatesAbsorbed: number;
  /** Business effects observed (rows written by handlers, events read back from the broker). */
  effectsApplied: number;
  /** Distinct messages offered whose effect never appeared. */
  lost: number;
  /** Distinct messages whose effect appeared more than once. */
  appliedTwice: number;
  /** Messages accepted but neither completed nor in a terminal state (DEAD / FAILED) after recovery. */
  stuck: number;
}

export function emptyLedger(): Ledger {
  return {
    offered: 0,
    accepted: 0,
    duplicatesAbsorbed: 0,
    effectsApplied: 0,
    lost: 0,
    appliedTwice: 0,
    stuck: 0,
  };
}

/** Counts lost / applied-twice from the ids offered and every effect observed (with repeats). */
export function reconcile(
  offeredIds: Iterable<string>,
  effectIds: Iterable<string>,
): Pick<Ledger, 'lost' | 'appliedTwice' | 'effectsApplied'> {
  const counts = new Map<string, number>();
  let effectsApplied = 0;
  for (const id of effectIds) {
    counts.set(id, (counts.get(id) ?? 0) + 1);
    effectsApplied += 1;
  }
  let lost = 0;
  for (const id of new Set(offeredIds)) if (!counts.has(id)) lost += 1;
  const appliedTwice = [...counts.values()].filter((n) => n > 1).length;
  return { lost, appliedTwice, effectsApplied };
}

export function formatLedger(scenario: string, ledger: Ledger): string {
  const cells = Object.entries(ledger).map(([key, value]) => `${key}=${value}`);
  return `ledger ${scenario}: ${cells.join(' ')}`;
}

/** Prints the ledger and throws unless lost, appliedTwice and stuck are all zero. */
export function assertLedger(scenario: string, ledger: Ledger): void {
  process.stdout.write(`${formatLedger(scenario, ledger)}\n`);
  const broken = (['lost', 'appliedTwice', 'stuck'] as const).filter((key) => ledger[key] !== 0);
  if (broken.length > 0) {
    throw new Error(
      `${scenario}: ${broken.map((key) => `${key}=${ledger[key]}`).join(', ')} (see the ledger above)`,
    );
  }
}

/** One event read back from a broker: its ordering key and its place in the key's emit order. */
export interface KeyedReadBack {
  readonly key: string;
  readonly seq: number;
}

/**
 * Where events sharing an ordering key were read back out of their emit order, in read order: a
 * key's sequence never goes backwards (a re-published event may repeat, at or after its place).
 * Empty when per-key order held.
 */
export function keyOrderViolations(readBack: Iterable<KeyedReadBack>): string[] {
  const violations: string[] = [];
  const lastSeq = new Map<string, number>();
  for (const record of readBack) {
    const previous = lastSeq.get(record.key) ?? -1;
    if (record.seq < previous) violations.push(`${record.key}: ${record.seq} after ${previous}`);
    lastSeq.set(record.key, Math.max(previous, record.seq));
  }
  return violations;
}
