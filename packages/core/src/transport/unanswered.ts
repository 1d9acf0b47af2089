/**
 * Tells a broker gone silent from a message too slow to send. A request the broker left
 * unanswered past the publish's deadline is `unavailable` (no attempt spent): a network dropping
 * packets, a paused or blocked broker withholds every answer, and charging each turned healthy
 * events FAILED during such an outage. But a message's size does make its request slow: over a
 * slow uplink a large one misses every deadline while small ones are answered, and `unavailable`
 * for ever it would never be charged, never FAILED, and block its ordering key. So a message
 * unanswered again after the broker answered other requests since its last try is charged
 * (`retryable`): the broker is up, this message cannot be sent within the deadline.
 * One per publisher (Kafka, SQS); the ids kept are bounded, the oldest dropped.
 */
export class UnansweredLedger {
  /** Requests the broker answered so far. */
  private answers = 0;
  /** Messages given up on unanswered, with `answers` then (oldest first). */
  private readonly givenUpAt = new Map<string, number>();

  constructor(private readonly kept = 10_000) {}

  /** The broker answered a request carrying `ids` (whatever it answered: it is up). */
  answered(ids: Iterable<string>): void {
    this.answers += 1;
    for (const id of ids) this.givenUpAt.delete(id);
  }

  /**
   * Whether `id`'s last request went unanswered: send it alone, so that its slowness is not its
   * neighbours' (each would be charged with it).
   */
  wasUnanswered(id: string): boolean {
    return this.givenUpAt.has(id);
  }

  /**
   * `id`'s request went unanswered past its deadline. True when it did before and the broker
   * answered other requests since: the message itself is too slow to send, charge it.
   */
  unansweredAgain(id: string): boolean {
    const before = this.givenUpAt.get(id);
    this.remember(id);
    return before !== undefined && this.answers > before;
  }

  /** `id`'s request went unanswered past its deadline: remembered (the newest last), no judgement. */
  remember(id: string): void {
    this.givenUpAt.delete(id);
    this.givenUpAt.set(id, this.answers);
    if (this.givenUpAt.size > this.kept) {
      const oldest = this.givenUpAt.keys().next().value;
      if (oldest !== undefined) this.givenUpAt.delete(oldest);
    }
  }
}
