import { CallUnsettled, WaitDeadline } from '../waitDeadline';
import type { AttachedConsumer, TransportUnderTest } from './types';

/**
 * Every call of the suite into the transport under test, bounded by the suite's `timeoutMs` (review
 * 90): a call that never settles (a broker that never answers a close, a consumer never ready)
 * fails its case naming the call, not jest's "Exceeded timeout" naming nothing.
 */
export class BoundedCalls {
  constructor(
    private readonly name: string,
    private readonly timeoutMs: number,
  ) {}

  /**
   * Settles as `call()` does, or rejects naming `what` once timeoutMs passed (WaitDeadline). What a
   * call given up on answers later is handed to `late` (review 91: a late transport or consumer was
   * left open): to close it, its failure unreported (the case already failed on the deadline).
   */
  async call<T>(what: string, call: () => Promise<T>, late?: (value: T) => Promise<unknown>): Promise<T> {
    const deadline = new WaitDeadline(this.timeoutMs);
    const running = Promise.resolve().then(call);
    try {
      return await deadline.race(() => running);
    } catch (error) {
      if (!CallUnsettled.is(error)) throw error;
      if (late) running.then(late).catch(() => undefined);
      throw new Error(
        `conformance (${this.name}): ${what} did not settle within ${this.timeoutMs} ms (the transport under test never answered)`,
      );
    } finally {
      deadline.end();
    }
  }

  /**
   * `transport` whose every call is bounded; what attach returns is bounded too (consumer()). Every
   * member is read from `transport` when used (review 91: a spread copied own properties only, so
   * a transport written as a class lost its destination and source getters).
   */
  transport(transport: TransportUnderTest): TransportUnderTest {
    const heldCount = transport.heldCount;
    return {
      // Only the calls the suite makes: publish and close (the relay's system and span name are
      // not the suite's to check).
      publisher: {
        publish: (messages, signal) =>
          this.call('publisher.publish()', () => transport.publisher.publish(messages, signal)),
        close: () => this.call('publisher.close()', () => transport.publisher.close()),
      },
      get destination() {
        return transport.destination;
      },
      get source() {
        return transport.source;
      },
      get unroutableDestination() {
        return transport.unroutableDestination;
      },
      attach: async (acceptor, context) =>
        this.consumer(
          await this.call(
            'attach()',
            () => transport.attach(acceptor, context),
            (consumer) => consumer.close(),
          ),
        ),
      publishRaw: (message) => this.call('publishRaw()', () => transport.publishRaw(message)),
      readDeadLetters: () => this.call('readDeadLetters()', () => transport.readDeadLetters()),
      ...(heldCount ? { heldCount: () => this.call('heldCount()', () => heldCount.call(transport)) } : {}),
      cleanup: () => this.call('cleanup()', () => transport.cleanup()),
    };
  }

  /**
   * `consumer` whose calls are bounded. close() keeps its identity: the same promise of the
   * consumer's gives the same bounded promise (the suite checks that concurrent calls share one).
   */
  consumer(consumer: AttachedConsumer): AttachedConsumer {
    const closes = new WeakMap<Promise<void>, Promise<void>>();
    return {
      ready: () => this.call('consumer ready()', () => consumer.ready()),
      check: () => this.call('consumer check()', () => consumer.check()),
      close: () => {
        const closing = consumer.close();
        // A close() that answers no promise (a broken transport) is bounded as it is.
        if (!(closing instanceof Promise)) return this.call('consumer close()', async () => closing);
        let bounded = closes.get(closing);
        if (!bounded) {
          bounded = this.call('consumer close()', () => closing);
          closes.set(closing, bounded);
        }
        return bounded;
      },
    };
  }
}
