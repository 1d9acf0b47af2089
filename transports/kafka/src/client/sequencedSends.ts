import type { DriverProducer, SendTurn, SequencedProducer, TopicRecords } from './types';

/**
 * How long a new producer waits for the one it replaces to disconnect: a socket close that hangs
 * on a silent network must not hold every later send.
 */
export const REPLACED_DISCONNECT_MS = 5_000;

/**
 * The sends of an idempotent producer, kept safe from the producer's own record numbering.
 *
 * An idempotent producer numbers each partition's records, and the broker drops a batch whose
 * numbers match one of the partition's last five batches, acknowledging it as a duplicate. Two
 * ways a batch gets numbers that are not its own:
 *
 * - **Two sends in flight.** @platformatic/kafka numbers a send when it starts and moves the
 *   numbering on only when the broker answered, so two sends at once are numbered alike: the
 *   broker refuses the later one (OUT_OF_ORDER_SEQUENCE_NUMBER) or drops it. So one send at a
 *   time, in the order asked (which keeps per-key order).
 * - **A send that failed after the broker wrote it** (its answer lost, a timeout) **or wrote it in
 *   part** (the request's other topic refused a record, e.g. MESSAGE_TOO_LARGE): both clients
 *   give its numbers back, and the next send of as many records gets them and is dropped. So
 *   after any failed send, a permanent one too, the next one goes out on a new producer (a new
 *   producer id, numbered afresh): the failed batch may then be written twice, never a later
 *   one lost (lostAnswer.test.ts, partlyWritten.test.ts).
 *
 * The replacement starts as the send fails (ready() tells when it is done), so a caller can keep
 * its cost (a new connection, the producer id: on a slow cluster seconds) out of the next send's
 * deadline. Charged to it, it left the records after a refused one unsendable on a slow cluster
 * (review15-poisonBehindDeadline.test.ts).
 */
export class SequencedSends implements SequencedProducer {
  private current: DriverProducer;
  private readonly listeners: (() => void)[] = [];
  private tail: Promise<unknown> = Promise.resolve();
  /** Why the current producer's last send failed; the next send starts a new producer. */
  private spent: { readonly cause: unknown } | null = null;
  /** A new producer that has not connected yet. */
  private unconnected = false;
  /** The replacement started when the last send failed (it never rejects), until it settled. */
  private replacing: Promise<void> | null = null;
  private closed = false;
  /** Replaced producers whose disconnect has not ended yet. */
  private readonly retiring = new Set<DriverProducer>();

  /**
   * `create` makes a new client producer, not connected; `replaced` is told each time a new one
   * takes over, with the failure that retired the old one (for the owner's log).
   */
  constructor(
    private readonly create: () => DriverProducer,
    private readonly replaced: (cause: unknown) => void = () => undefined,
  ) {
    this.current = this.adopt(create());
  }

  connect(): Promise<void> {
    return this.current.connect();
  }

  send(batches: readonly TopicRecords[], turn?: SendTurn): Promise<void> {
    const sending = this.tail.then(() => this.sendNow(batches, turn));
    this.tail = sending.catch(() => undefined);
    return sending;
  }

  ready(): Promise<void> | null {
    return this.replacing;
  }

  disconnect(): Promise<void> {
    this.closed = true;
    return this.current.disconnect();
  }

  /** Destroys the current producer and those replaced whose disconnect has not ended. */
  async destroy(): Promise<void> {
    this.closed = true;
    await Promise.all([this.current, ...this.retiring].map((producer) => producer.destroy()));
  }

  onDisconnect(listener: () => void): void {
    this.listeners.push(listener);
  }

  /**
   * A send given up while it waited its turn (or its producer's renewal or connect) is not handed
   * to the client: its caller reported it not sent and sends it again. Nothing was sent, so the
   * producer is not spent.
   */
  private async sendNow(batches: readonly TopicRecords[], turn: SendTurn | undefined): Promise<void> {
    if (this.closed) throw new Error('the Kafka producer is closed');
    if (this.replacing) {
      await this.replacing;
      this.replacing = null;
    }
    if (this.closed) throw new Error('the Kafka producer is closed');
    if (this.spent) await this.renew(this.spent.cause);
    if (this.unconnected) {
      await this.current.connect();
      this.unconnected = false;
    }
    if (turn?.givenUp.aborted)
      throw new Error('the send was given up before it reached the Kafka client', {
        cause: turn.givenUp.reason,
      });
    turn?.handed();
    try {
      await this.current.send(batches);
    } catch (error) {
      this.spent = { cause: error };
      if (!this.closed) {
        const replacing = this.replace().then(() => {
          if (this.replacing === replacing) this.replacing = null;
        });
        this.replacing = replacing;
      }
      throw error;
    }
  }

  /**
   * Replaces the spent producer and connects the new one, now; a connect that fails is left to
   * the next send (it connects an unconnected producer first). Once closed, the new producer is
   * disconnected instead.
   */
  private async replace(): Promise<void> {
    try {
      if (this.spent) await this.renew(this.spent.cause);
      if (this.closed || !this.unconnected) return;
      const producer = this.current;
      await producer.connect();
      if (producer === this.current) this.unconnected = false;
      if (this.closed) await producer.disconnect();
    } catch {
      // Connecting again is the next send's (its caller then learns why it failed).
    }
  }

  private async renew(cause: unknown): Promise<void> {
    const old = this.current;
    this.current = this.adopt(this.create());
    this.spent = null;
    this.unconnected = true;
    this.replaced(cause);
    this.retiring.add(old);
    const disconnected = old
      .disconnect()
      .catch(() => undefined)
      .finally(() => this.retiring.delete(old));
    let timer: NodeJS.Timeout | undefined;
    const ended = await Promise.race([
      disconnected.then(() => true),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), REPLACED_DISCONNECT_MS);
      }),
    ]);
    clearTimeout(timer);
    // A disconnect a silent cluster holds (a send in flight waits for its answer up to the
    // request timeout) would keep the old producer's sockets open that long: ended now.
    if (!ended) await old.destroy().catch(() => undefined);
  }

  /** Disconnects of `producer` reach the listeners while it is the current one (not once replaced). */
  private adopt(producer: DriverProducer): DriverProducer {
    producer.onDisconnect(() => {
      if (producer !== this.current) return;
      for (const listener of this.listeners) listener();
    });
    return producer;
  }
}
