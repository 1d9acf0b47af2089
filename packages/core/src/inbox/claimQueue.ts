import { startLease, type Lease } from '../lease';
import { emit, emitInfrastructure, type ProcessDeps } from './process';
import type { ClaimedReceipt } from './types';

/** A claim ready to start, and the local time its lease is proven from (its lease clock). */
export interface QueuedClaim {
  readonly receipt: ClaimedReceipt;
  readonly claimedAt: number;
  /**
   * The queue's renewals of this claim still in flight when it left the queue (sent while it
   * waited): each resolves the local time it was sent once it answered the claim owned, else
   * undefined. The lane's lease is proven from it (Lease.prove): it extended the claim's lease on
   * the database from then, after `claimedAt`.
   */
  readonly proofs?: ReadonlyArray<Promise<number | undefined>>;
}

/** One renewal of a batch in flight: the rows it renews, and when it was sent. */
interface Renewal {
  readonly rows: ReadonlySet<string>;
  /** The local time it was sent, once it answered (the ids it found owned); undefined if it failed. */
  readonly answer: Promise<{ sentAt: number; owned: ReadonlySet<string> } | undefined>;
}

/** The rows of one claim statement still waiting, under one lease renewed for all of them. */
interface Batch {
  readonly rows: Map<string, ClaimedReceipt>;
  lease: Lease | undefined;
  /** Its renewals not answered yet (at most RENEWALS_IN_FLIGHT_AT_MOST). */
  readonly renewals: Set<Renewal>;
}

/**
 * The worker's local queue: receipts claimed ahead of free lanes (worker.prefetch). Every
 * batch of waiting claims keeps one lease (the lease kit) whose renewal extends all of its
 * rows in one statement, fenced by claim token; rows a renewal no longer finds owned leave
 * the queue. A batch whose lease cannot be proven alive is dropped: its rows never start and
 * are recovered after their lease expires. release() gives unstarted claims back (close()).
 */
export class ClaimQueue<TTx> {
  private readonly batches: Batch[] = [];
  /** Lease stops not yet settled (a renewal in flight); release() waits for them. */
  private readonly stopping = new Set<Promise<void>>();
  /** Gives back of dropped batches not yet settled; release() waits for them. */
  private readonly givingBack = new Set<Promise<void>>();

  constructor(private readonly deps: ProcessDeps<TTx>) {}

  get size(): number {
    return this.batches.reduce((sum, batch) => sum + batch.rows.size, 0);
  }

  /**
   * Queues the rows of one claim; `claimedAt` is the local time its statement was sent. They
   * start earliest due first (the claim statement returns them in no particular order).
   */
  add(receipts: readonly ClaimedReceipt[], claimedAt: number): void {
    if (receipts.length === 0) return;
    const due = [...receipts].sort((a, b) => a.nextAttemptAt.getTime() - b.nextAttemptAt.getTime());
    const batch: Batch = { rows: new Map(due.map((r) => [r.id, r])), lease: undefined, renewals: new Set() };
    const { worker } = this.deps;
    batch.lease = startLease({
      durationMs: worker.leaseMs,
      intervalMs: worker.heartbeatIntervalMs,
      claimedAt,
      renew: (signal) => this.renew(batch, signal),
      onLost: () => this.drop(batch),
      onError: (error) => emitInfrastructure(this.deps, 'queue-heartbeat', error),
    });
    this.batches.push(batch);
  }

  /**
   * The oldest waiting claim whose lease is still proven alive locally, removed from the
   * queue; undefined when none is left. Its lane's lease starts from the queue lease's last proof,
   * and is proven from the send time of each queue renewal of the claim then in flight that answers
   * it owned (QueuedClaim.proofs): that renewal extended it on the database from then. Not
   * credited, the lane's lease ran out locally a round trip or more before the database's: on a
   * database whose round trips exceed about a third of the lease, before its handler started (the
   * slow-database fault scenario).
   */
  take(now = performance.now()): QueuedClaim | undefined {
    const { leaseMs, heartbeatIntervalMs } = this.deps.worker;
    for (;;) {
      const batch = this.batches[0];
      if (!batch) return undefined;
      const lease = batch.lease;
      if (!lease || lease.lost || now >= lease.provenAt + leaseMs - heartbeatIntervalMs) {
        this.drop(batch);
        continue;
      }
      const [receipt] = batch.rows.values();
      if (!receipt) {
        this.finish(batch);
        continue;
      }
      batch.rows.delete(receipt.id);
      // Taken before finish(): a batch finished stops its lease, not its renewals in flight.
      const proofs = [...batch.renewals]
        .filter((r) => r.rows.has(receipt.id))
        .map((r) => provenFor(r, receipt.id));
      if (batch.rows.size === 0) this.finish(batch);
      return { receipt, claimedAt: lease.provenAt, proofs };
    }
  }

  /**
   * Stops every batch lease, waits for renewals in flight, and gives the waiting claims back
   * (their attempt returned); resolves how many were released.
   */
  async release(): Promise<number> {
    const waiting = this.batches.flatMap((batch) => [...batch.rows.values()]);
    for (const batch of [...this.batches]) this.finish(batch);
    await Promise.all([...this.stopping, ...this.givingBack]);
    return (await this.giveBack(waiting)).length;
  }

  /**
   * Gives `receipts` back, their attempt returned (releaseClaims, fenced by claim token: a row
   * claimed again since is left alone, one whose lease ran out unclaimed is given back); resolves
   * the ids released. A failure is reported and the lease recovers those rows.
   */
  private async giveBack(receipts: readonly ClaimedReceipt[]): Promise<string[]> {
    if (receipts.length === 0) return [];
    try {
      return await this.deps.ops.release(receipts);
    } catch (error) {
      emitInfrastructure(this.deps, 'release', error);
      return [];
    }
  }

  /**
   * One renewal of `batch`. Its answer may come after the kit gave up on it (renewalStatement),
   * when the batch may be gone: given back by release() (close()), dropped, or emptied. Its rows
   * are then no longer this queue's to report: a late answer finding them not held (given back,
   * or recovered after the drop) is no lease lost, and may come after close() resolved.
   */
  private async renew(batch: Batch, signal: AbortSignal): Promise<boolean> {
    const waiting = [...batch.rows.values()];
    if (waiting.length === 0) return true;
    const sentAt = performance.now();
    const answer = this.deps.ops.renewQueued(waiting, signal);
    // Its answer also proves the leases of the rows it renewed that left for a lane meanwhile (take).
    const renewal: Renewal = {
      rows: new Set(waiting.map((receipt) => receipt.id)),
      answer: answer.then(
        (owned) => ({ sentAt, owned }),
        () => undefined,
      ),
    };
    batch.renewals.add(renewal);
    const owned = await answer.finally(() => batch.renewals.delete(renewal));
    if (!this.batches.includes(batch)) return true;
    for (const receipt of waiting) {
      if (!owned.has(receipt.id) && batch.rows.delete(receipt.id)) this.lost(receipt);
    }
    if (batch.rows.size === 0) this.finish(batch);
    return true;
  }

  /**
   * The batch's lease can no longer be proven locally: its rows are not started, and are given
   * back (release() waits for that). The database may well still hold them under their token (an
   * event loop a CPU-bound handler blocked past the proof, renewals that failed): left to their
   * lease, each had spent an attempt no handler used, and the last one made it DEAD (review 103).
   */
  private drop(batch: Batch): void {
    const rows = [...batch.rows.values()];
    for (const receipt of rows) this.lost(receipt);
    batch.rows.clear();
    this.finish(batch);
    if (rows.length === 0) return;
    // Claims that cycle when no handler starts meanwhile (health: SessionOutage.cycling).
    this.deps.outage.lostBeforeHandler(rows.length);
    const given = this.giveBack(rows).then(() => void this.givingBack.delete(given));
    this.givingBack.add(given);
  }

  private finish(batch: Batch): void {
    const stopped = batch.lease?.stop();
    if (stopped) {
      this.stopping.add(stopped);
      void stopped.then(() => this.stopping.delete(stopped));
    }
    const index = this.batches.indexOf(batch);
    if (index >= 0) this.batches.splice(index, 1);
  }

  private lost(receipt: ClaimedReceipt): void {
    emit(this.deps, {
      type: 'lease-lost',
      receiptId: receipt.id,
      consumer: receipt.consumer,
      attempt: receipt.attempts,
    });
  }
}

/** When `renewal` was sent, once it answered `id` owned; else undefined. */
async function provenFor(renewal: Renewal, id: string): Promise<number | undefined> {
  const answered = await renewal.answer;
  return answered?.owned.has(id) ? answered.sentAt : undefined;
}
