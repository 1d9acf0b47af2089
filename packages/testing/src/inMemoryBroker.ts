import { type OutboxMessage } from '@ferry/core';
import { outboxHeaders, timerOption } from '@ferry/core/transport';
import { clearTimeout as realClearTimeout, setTimeout as realSetTimeout } from './realTimers';
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
  /** A copy of what the broker holds: changing it changes no redelivery nor dead letter. */
  readonly delivery: InMemoryDelivery;
  readonly session: number;
  /**
   * How many times it went back to its queue because its acceptance failed (`retryLater`, or
   * `nack` with `transportAttempt`), as RabbitMQ's `x-ferry-transport-attempts`; kept across
   * `restart()`.
   */
  readonly transportAttempts: number;
}

export interface NackOptions {
  /** The acceptance of these deliveries failed: each counts one transport attempt. */
  readonly transportAttempt?: boolean;
}

/** One delivery as a queue holds it: the broker's own copy, and its transport attempts. */
interface Held {
  readonly delivery: InMemoryDelivery;
  readonly transportAttempts: number;
}

interface Queue {
  ready: Held[];
  /** Handed out and not settled, in the order taken, each with what the queue holds of it. */
  unacked: Map<Unacked, Held>;
  readonly deadLetters: InMemoryDeadLetter[];
  readonly waiters: Set<() => void>;
}

/** A copy of `delivery`: its bytes and headers, so neither side sees the other's later changes. */
function copyDelivery(delivery: InMemoryDelivery): InMemoryDelivery {
  return {
    body: Buffer.from(delivery.body),
    ...(delivery.messageId !== undefined ? { messageId: delivery.messageId } : {}),
    headers: { ...delivery.headers },
  };
}

/**
 * A broker in memory with the semantics ferry's transports rely on: named queues, deliveries
 * held unacked until a consumer settles them, nacked ones back at the head of their queue (so
 * order is kept), a dead-letter list per queue, and `restart()`, which ends the session: every
 * unacked delivery goes back to its queue and late acks of the old session are ignored. As on a
 * real broker, what is sent is copied in, and what is handed out (take, deadLetters) is a copy.
 * Passes the transport conformance suite (`test/conformance.test.ts`).
 */
export class InMemoryBroker {
  private readonly queues = new Map<string, Queue>();
  /** Deliveries waiting out their retryLater delay, by queue name: the broker still holds them. */
  private readonly delayed = new Map<string, number>();
  private session = 0;
  /** Listeners of onSessionLost, by queue name (kept while the queue is deleted and declared again). */
  private readonly sessionListeners = new Map<string, Set<() => void>>();

  declareQueue(name: string): void {
    if (!this.queues.has(name)) {
      this.queues.set(name, { ready: [], unacked: new Map(), deadLetters: [], waiters: new Set() });
    }
  }

  /** Whether `name` is declared (and not deleted since): a consumer consumes it only then. */
  hasQueue(name: string): boolean {
    return this.queues.has(name);
  }

  deleteQueue(name: string): void {
    const queue = this.queues.get(name);
    this.queues.delete(name);
    queue?.waiters.forEach((wake) => wake());
    if (queue) this.sessionListeners.get(name)?.forEach((lost) => lost());
  }

  /**
   * Calls `listener` each time a consumer of `queue` loses its session with it: `restart()` (of
   * every queue) or `deleteQueue(queue)`, at once, as a real broker closes a consumer's channel
   * (a restart) or cancels it (its queue deleted) whatever the consumer is doing, a batch still
   * in acceptance included. The result stops listening.
   */
  onSessionLost(queue: string, listener: () => void): () => void {
    const listeners = this.sessionListeners.get(queue) ?? new Set();
    this.sessionListeners.set(queue, listeners);
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.sessionListeners.get(queue) === listeners) {
        this.sessionListeners.delete(queue);
      }
    };
  }

  /** Appends a copy of `delivery` to `queue`; false when there is no such queue (unroutable). */
  send(queue: string, delivery: InMemoryDelivery): boolean {
    const target = this.queues.get(queue);
    if (!target) return false;
    target.ready.push({ delivery: copyDelivery(delivery), transportAttempts: 0 });
    target.waiters.forEach((wake) => wake());
    return true;
  }

  /** Up to `max` ready deliveries of `queue`, oldest first, now unacked in the current session. */
  take(queue: string, max: number): Unacked[] {
    const target = this.queues.get(queue);
    if (!target) return [];
    return target.ready.splice(0, max).map((held) => {
      const item: Unacked = {
        queue,
        delivery: copyDelivery(held.delivery),
        session: this.session,
        transportAttempts: held.transportAttempts,
      };
      target.unacked.set(item, held);
      return item;
    });
  }

  /** Removes settled deliveries. Deliveries of an ended session are ignored: they are queued again. */
  ack(items: readonly Unacked[]): void {
    for (const item of items) this.settle(item);
  }

  /**
   * Puts deliveries back at the head of their queue, in the order given (with `transportAttempt`,
   * each counts one more transport attempt).
   */
  nack(items: readonly Unacked[], options: NackOptions = {}): void {
    for (const item of [...items].reverse()) {
      const settled = this.settle(item);
      if (!settled) continue;
      const { queue, held } = settled;
      queue.ready.unshift(
        options.transportAttempt === true ? { ...held, transportAttempts: held.transportAttempts + 1 } : held,
      );
    }
  }

  /**
   * Takes an unacked delivery off its queue for `delayMs`, then appends it to the tail of the
   * queue with one more transport attempt: RabbitMQ's retry tier queue, which dead-letters the
   * retry copy back to the work queue once its TTL expired. Meanwhile `held(queue)` counts it and
   * a `restart()` leaves it waiting (a tier queue is durable); a queue that no longer exists when
   * the delay ends does not get it (unroutable, as on RabbitMQ). False, and nothing done, when the
   * delivery is not unacked (settled already, of an ended session, or its queue deleted).
   */
  retryLater(item: Unacked, delayMs: number): boolean {
    const ms = timerOption('delayMs', delayMs, 0);
    const settled = this.settle(item);
    if (!settled) return false;
    const held: Held = { ...settled.held, transportAttempts: settled.held.transportAttempts + 1 };
    const name = item.queue;
    this.delayed.set(name, (this.delayed.get(name) ?? 0) + 1);
    // The broker's own clock (a retry tier's TTL) on the global timers, on purpose: under jest's
    // fake timers the delay passes with jest.advanceTimersByTime, as a test of the delay expects.
    const timer = setTimeout(() => {
      const left = (this.delayed.get(name) ?? 1) - 1;
      if (left > 0) this.delayed.set(name, left);
      else this.delayed.delete(name);
      const queue = this.queues.get(name);
      if (!queue) return;
      queue.ready.push(held);
      queue.waiters.forEach((wake) => wake());
    }, ms);
    // A delay still running keeps no test process alive.
    timer.unref();
    return true;
  }

  /** Acks a delivery and records it on its queue's dead-letter list. */
  deadLetter(item: Unacked, reason: string, detail: string): void {
    const settled = this.settle(item);
    settled?.queue.deadLetters.push({ delivery: settled.held.delivery, reason, detail });
  }

  /**
   * How many deliveries `queue` still holds: ready, handed to a consumer and not settled, or
   * waiting out a `retryLater` delay.
   */
  held(queue: string): number {
    const target = this.queues.get(queue);
    const waiting = this.delayed.get(queue) ?? 0;
    return (target ? target.ready.length + target.unacked.size : 0) + waiting;
  }

  /** The dead letters of `queue`, oldest first (copies). */
  deadLetters(queue: string): readonly InMemoryDeadLetter[] {
    return (this.queues.get(queue)?.deadLetters ?? []).map((letter) => ({
      ...letter,
      delivery: copyDelivery(letter.delivery),
    }));
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
        realClearTimeout(timer);
        target?.waiters.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      // A poll's cap, on real time (realTimers): faked, a consumer of a queue not declared yet never looked again.
      const timer = realSetTimeout(done, maxWaitMs);
      target?.waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** How many times `restart()` ended a session: a consumer that sees it change lost its session. */
  get restarts(): number {
    return this.session;
  }

  /**
   * Ends the session, as a broker restart does: unacked deliveries go back to the head of their
   * queues, and each consumer is told (onSessionLost), once `restarts` counts the new session.
   */
  restart(): void {
    this.session += 1;
    for (const queue of this.queues.values()) {
      queue.ready.unshift(...queue.unacked.values());
      queue.unacked = new Map();
      queue.waiters.forEach((wake) => wake());
    }
    for (const listeners of [...this.sessionListeners.values()]) listeners.forEach((lost) => lost());
  }

  /**
   * A publisher that puts each message on the queue named by its `destination`, as a delivery
   * with ferry's headers and the payload as JSON. A message that names no destination is
   * `permanent` (the real publishers' "no route"); one to no queue is `retryable` (a missing
   * exchange, topic or queue).
   */
  publisher(options: Omit<InMemoryPublisherOptions, 'decide'> = {}): InMemoryPublisher {
    return new InMemoryPublisher({ ...options, decide: (message) => this.route(message) });
  }

  private route(message: OutboxMessage): PublishDecision {
    if (message.destination === null) {
      return {
        permanent: `no destination: the event names none (the in-memory broker routes by destination)`,
      };
    }
    const delivery: InMemoryDelivery = {
      body: Buffer.from(JSON.stringify(message.payload)),
      messageId: message.id,
      headers: outboxHeaders(message),
    };
    if (this.send(message.destination, delivery)) return 'sent';
    return { retryable: `no queue named ${message.destination}` };
  }

  /**
   * Takes `item` off its queue's unacked deliveries: what the queue held of it, or undefined when
   * it is not unacked there (settled already, of an ended session, or its queue deleted).
   */
  private settle(item: Unacked): { readonly queue: Queue; readonly held: Held } | undefined {
    if (item.session !== this.session) return undefined;
    const queue = this.queues.get(item.queue);
    const held = queue?.unacked.get(item);
    if (!queue || !held) return undefined;
    queue.unacked.delete(item);
    return { queue, held };
  }
}
