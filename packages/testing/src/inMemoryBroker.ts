import { type OutboxMessage } from '@ferry/core';
import { outboxHeaders } from '@ferry/core/transport';
import { InMemoryPublisher, type InMemoryPublisherOptions, type PublishDecision } from './inMemoryPublisher';

/** One message as the in-memory broker holds it: bytes, a native message id, headers. */
export interface InMemoryDelivery {
  readonly body: Buffer;
  /** The broker-native id (like AMQP's messageId), used when ferry's header is absent. */
  readonly messageId?: string;
  readonly headers: Readonly<Record<string, string>>;
}

export interface InMemoryDeadLetter {
  readonly delivery: InMemoryDelivery;
  /** ferry's reject reason (`TRANSPORT_REJECT_REASONS`). */
  readonly reason: string;
  readonly detail: string;
}

/** A delivery handed to a consumer and not yet settled, within one broker session. */
export interface Unacked {
  readonly queue: string;
  readonly delivery: InMemoryDelivery;
  readonly session: number;
}

interface Queue {
  ready: InMemoryDelivery[];
  unacked: Unacked[];
  readonly deadLetters: InMemoryDeadLetter[];
  readonly waiters: Set<() => void>;
}

/**
 * A broker in memory with the semantics ferry's transports rely on: named queues, deliveries
 * held unacked until a consumer settles them, nacked ones back at the head of their queue (so
 * order is kept), a dead-letter list per queue, and `restart()`, which ends the session: every
 * unacked delivery goes back to its queue and late acks of the old session are ignored.
 * Passes the transport conformance suite (`test/conformance.test.ts`).
 */
export class InMemoryBroker {
  private readonly queues = new Map<string, Queue>();
  private session = 0;

  declareQueue(name: string): void {
    if (!this.queues.has(name)) {
      this.queues.set(name, { ready: [], unacked: [], deadLetters: [], waiters: new Set() });
    }
  }

  deleteQueue(name: string): void {
    const queue = this.queues.get(name);
    this.queues.delete(name);
    queue?.waiters.forEach((wake) => wake());
  }

  /** Appends a delivery to `queue`; false when there is no such queue (unroutable). */
  send(queue: string, delivery: InMemoryDelivery): boolean {
    const target = this.queues.get(queue);
    if (!target) return false;
    target.ready.push(delivery);
    target.waiters.forEach((wake) => wake());
    return true;
  }

  /** Up to `max` ready deliveries of `queue`, oldest first, now unacked in the current session. */
  take(queue: string, max: number): Unacked[] {
    const target = this.queues.get(queue);
    if (!target) return [];
    const taken = target.ready.splice(0, max).map((delivery) => ({ queue, delivery, session: this.session }));
    target.unacked.push(...taken);
    return taken;
  }

  /** Removes settled deliveries. Deliveries of an ended session are ignored: they are queued again. */
  ack(items: readonly Unacked[]): void {
    for (const item of this.current(items)) this.settle(item);
  }

  /** Puts deliveries back at the head of their queue, in the order given. */
  nack(items: readonly Unacked[]): void {
    for (const item of [...this.current(items)].reverse()) {
      this.settle(item);
      this.queues.get(item.queue)?.ready.unshift(item.delivery);
    }
  }

  /** Acks a delivery and records it on its queue's dead-letter list. */
  deadLetter(item: Unacked, reason: string, detail: string): void {
    if (this.current([item]).length === 0) return;
    this.settle(item);
    this.queues.get(item.queue)?.deadLetters.push({ delivery: item.delivery, reason, detail });
  }

  /** How many deliveries `queue` still holds: ready, or handed to a consumer and not settled. */
  held(queue: string): number {
    const target = this.queues.get(queue);
    return target ? target.ready.length + target.unacked.length : 0;
  }

  deadLetters(queue: string): readonly InMemoryDeadLetter[] {
    return [...(this.queues.get(queue)?.deadLetters ?? [])];
  }

  /**
   * Resolves when `queue` gets a delivery, after `maxWaitMs`, or when `signal` aborts. A queue
   * that does not exist (yet, or any more) waits the full `maxWaitMs`, so a consumer never spins.
   */
  waitForWork(queue: string, maxWaitMs: number, signal: AbortSignal): Promise<void> {
    const target = this.queues.get(queue);
    if ((target && target.ready.length > 0) || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        target?.waiters.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, maxWaitMs);
      target?.waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Ends the session, as a broker restart does: unacked deliveries go back to the head of their queues. */
  restart(): void {
    for (const queue of this.queues.values()) {
      queue.ready.unshift(...queue.unacked.map((item) => item.delivery));
      queue.unacked = [];
      queue.waiters.forEach((wake) => wake());
    }
    this.session += 1;
  }

  /**
   * A publisher that puts each message on the queue named by its `destination`, as a delivery
   * with ferry's headers and the payload as JSON; a message to no queue is reported retryable.
   */
  publisher(options: Omit<InMemoryPublisherOptions, 'decide'> = {}): InMemoryPublisher {
    return new InMemoryPublisher({ ...options, decide: (message) => this.route(message) });
  }

  private route(message: OutboxMessage): PublishDecision {
    const delivery: InMemoryDelivery = {
      body: Buffer.from(JSON.stringify(message.payload)),
      messageId: message.id,
      headers: outboxHeaders(message),
    };
    if (message.destination !== null && this.send(message.destination, delivery)) return 'sent';
    return { retryable: `no queue named ${String(message.destination)}` };
  }

  private current(items: readonly Unacked[]): Unacked[] {
    return items.filter((item) => item.session === this.session);
  }

  private settle(item: Unacked): void {
    const queue = this.queues.get(item.queue);
    if (queue) queue.unacked = queue.unacked.filter((entry) => entry !== item);
  }
}
