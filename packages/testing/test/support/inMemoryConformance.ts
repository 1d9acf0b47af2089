import type { TransportConsumerEvent } from '@ferry/core/transport';
import { FERRY_HEADERS, type InboxAcceptInput, type InboxAcceptor } from '@ferry/core';
import { InMemoryBroker, attachInMemoryConsumer, type InMemoryConsumerOptions } from '@ferry/testing';
import type { AttachedConsumer, TransportConformanceOptions } from '@ferry/testing/conformance';

/** Pieces of the in-memory transport a test swaps for broken ones (review25/28-conformance-mutants). */
export interface InMemoryVariant {
  /** The broker of each case (a subclass of InMemoryBroker: the broken broker / publisher). */
  readonly broker?: () => InMemoryBroker;
  /** What the consumer hands the inbox (a broken consumer's inputs). */
  readonly inputs?: (input: InboxAcceptInput) => InboxAcceptInput;
  /** Wraps the acceptor the suite attaches (a consumer that reads the answers its own way). */
  readonly acceptor?: (acceptor: InboxAcceptor, broker: InMemoryBroker) => InboxAcceptor;
  /** Extra options of the in-memory consumer. */
  readonly consumer?: Partial<InMemoryConsumerOptions>;
  /**
   * Wraps what attach returns (a broken close()); `emit` reaches the suite's observer, and the
   * consumer's own `disconnected` (closed) event is then left to the wrapper.
   */
  readonly attached?: (
    consumer: AttachedConsumer,
    connection: { emit: (event: TransportConsumerEvent) => void; instance: () => string },
  ) => AttachedConsumer;
  /** The transport's heldCount (default: what the broker holds of the queue, ready or unacked). */
  readonly heldCount?: (broker: InMemoryBroker, queue: string) => number;
  /** Which of the consumer's events reach the suite's observer (a consumer that reports less). */
  readonly reports?: (event: TransportConsumerEvent) => boolean;
  /** The consumer's readiness probe in place of its own check() (`closed`: its close() was called). */
  readonly check?: (own: () => Promise<void>, closed: () => boolean) => Promise<void>;
}

/**
 * The conformance options of the in-memory broker of @ferry/testing: each case gets a fresh
 * broker; restartBroker ends the current broker's session. `variant` swaps in broken pieces.
 */
export function inMemoryConformance(
  options: { readonly name: string; readonly timeoutMs: number } & InMemoryVariant,
): TransportConformanceOptions {
  let current: InMemoryBroker | null = null;
  return {
    name: options.name,
    transport: 'memory',
    system: 'memory',
    features: {
      deadLetter: true,
      orderingPerKey: true,
      redeliveryAfterRestart: true,
      unroutableDetection: true,
      heldCount: true,
    },
    restartBroker: async () => current?.restart(),
    timeoutMs: options.timeoutMs,
    async createTransport({ publisherObserver }) {
      const broker = options.broker?.() ?? new InMemoryBroker();
      current = broker;
      const queue = 'conformance';
      broker.declareQueue(queue);
      const publisher = broker.publisher({ observer: publisherObserver });
      return {
        publisher,
        destination: queue,
        source: queue,
        unroutableDestination: 'nowhere',
        async attach(acceptor, { consumer, observer }) {
          let fed: InboxAcceptor = acceptor;
          const mapInputs = options.inputs;
          if (mapInputs) {
            fed = {
              maxPayloadBytes: acceptor.maxPayloadBytes,
              acceptMany: (inputs) => acceptor.acceptMany(inputs.map(mapInputs)),
            };
          }
          if (options.acceptor) fed = options.acceptor(fed, broker);
          let instance = '';
          const wrap = options.attached;
          const seen = (event: TransportConsumerEvent) => {
            if (event.type === 'connected') instance = event.instance;
            if (wrap && event.type === 'disconnected' && event.reason === 'closed') return;
            if (options.reports && !options.reports(event)) return;
            observer(event);
          };
          const attached = attachInMemoryConsumer(fed, {
            broker,
            queue,
            consumer,
            observer: seen,
            retryBackoff: { initialMs: 20, maxMs: 100 },
            ...options.consumer,
          });
          await attached.ready();
          const probe = options.check;
          let closing = false;
          const probed: AttachedConsumer = probe
            ? {
                ready: () => attached.ready(),
                check: () =>
                  probe(
                    () => attached.check(),
                    () => closing,
                  ),
                close: () => {
                  closing = true;
                  return attached.close();
                },
              }
            : attached;
          return wrap ? wrap(probed, { emit: observer, instance: () => instance }) : probed;
        },
        async publishRaw(message) {
          broker.send(queue, {
            body: Buffer.from(message.body),
            ...(message.messageId !== undefined ? { messageId: message.messageId } : {}),
            headers: { ...message.headers },
          });
        },
        async readDeadLetters() {
          return broker.deadLetters(queue).map(({ delivery, reason }) => ({
            messageId: delivery.headers[FERRY_HEADERS.messageId] ?? delivery.messageId ?? null,
            reason,
          }));
        },
        async heldCount() {
          return options.heldCount ? options.heldCount(broker, queue) : broker.held(queue);
        },
        async cleanup() {
          await publisher.close();
          broker.deleteQueue(queue);
        },
      };
    },
  };
}
