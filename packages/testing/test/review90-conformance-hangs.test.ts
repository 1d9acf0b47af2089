/**
 * Review 90, failing test: the conformance suite waits without a deadline on the transport under
 * test's own calls.
 *
 * What I did: ran `runTransportConformance` (timeoutMs 1 s) on a transport of my own whose consumer
 * `close()` never settles once (a broker that never answers the channel close), and the same with
 * `attach()`, `publishRaw()`, `publisher.publish()`, `cleanup()`, `restartBroker()` and
 * `createTransport()` in turn.
 * What happened: the suite's waits (`waitUntil`) have deadlines, but these calls are awaited bare:
 * the case or hook hung until jest's own timeout (3 × timeoutMs, "Exceeded timeout of 3000 ms for
 * a hook"), which names neither the call nor the transport; and a consumer `close()` that hung in
 * `afterEach` kept `cleanup()` from running, so the case's queue / topic was left on the broker.
 * The docs promise: "the wait that runs out reports first, with its own message".
 * What should happen: every call into the transport under test is bounded by `timeoutMs` and fails
 * naming the call ("conformance (<name>): consumer close() did not settle within 1000 ms");
 * `afterEach` runs `cleanup()` whatever the consumers' close did.
 */
import type {
  AttachedConsumer,
  TransportConformanceOptions,
  TransportUnderTest,
} from '@ferry/testing/conformance';
import { inMemoryConformance } from './support/inMemoryConformance';
import { conformanceFailures } from './support/recordedConformance';

jest.mock('../src/conformance/jest', () =>
  jest
    .requireActual<typeof import('./support/recordedConformance')>('./support/recordedConformance')
    .recordingJest(),
);

const TIMEOUT_MS = 1_000;
const SUITE_RUN_MS = 120_000;

type Hang =
  | 'consumer close()'
  | 'attach()'
  | 'publishRaw()'
  | 'publisher.publish()'
  | 'cleanup()'
  | 'restartBroker()'
  | 'createTransport()';

/** A call that never settles. */
const never = (): Promise<never> => new Promise<never>(() => undefined);

/**
 * The in-memory transport whose `hang` call never settles the first time it is made (the real call
 * is still made, so nothing of the broker is left behind); counts the transports made and cleaned.
 */
function hangingOnce(hang: Hang): {
  options: TransportConformanceOptions;
  counts: { created: number; cleaned: number };
} {
  const base = inMemoryConformance({ name: `review90 (${hang} hangs)`, timeoutMs: TIMEOUT_MS });
  const counts = { created: 0, cleaned: 0 };
  let hung = false;
  const once = (what: Hang): boolean => {
    if (hung || what !== hang) return false;
    hung = true;
    return true;
  };
  const wrapConsumer = (consumer: AttachedConsumer): AttachedConsumer => {
    let closing: Promise<void> | undefined;
    return {
      ready: () => consumer.ready(),
      check: () => consumer.check(),
      close() {
        if (closing) return closing;
        if (once('consumer close()')) {
          void consumer.close();
          closing = never();
        } else {
          closing = consumer.close();
        }
        return closing;
      },
    };
  };
  const wrap = (transport: TransportUnderTest): TransportUnderTest => {
    const publisher = transport.publisher;
    return {
      ...transport,
      publisher: {
        publish: (messages, signal) =>
          once('publisher.publish()') ? never() : publisher.publish(messages, signal),
        close: () => publisher.close(),
      },
      async attach(acceptor, context) {
        const consumer = await transport.attach(acceptor, context);
        if (!once('attach()')) return wrapConsumer(consumer);
        await consumer.close();
        return never();
      },
      async publishRaw(message) {
        await transport.publishRaw(message);
        if (once('publishRaw()')) await never();
      },
      async cleanup() {
        counts.cleaned += 1;
        await transport.cleanup();
        if (once('cleanup()')) await never();
      },
    };
  };
  const options: TransportConformanceOptions = {
    ...base,
    restartBroker: async () => {
      await base.restartBroker?.();
      if (once('restartBroker()')) await never();
    },
    async createTransport(context) {
      const transport = await base.createTransport(context);
      counts.created += 1;
      if (!once('createTransport()')) return wrap(transport);
      counts.cleaned += 1;
      await transport.cleanup();
      return never();
    },
  };
  return { options, counts };
}

describe('review90: every call of the conformance suite into the transport under test has a deadline', () => {
  it.each<Hang>([
    'consumer close()',
    'attach()',
    'publishRaw()',
    'publisher.publish()',
    'cleanup()',
    'restartBroker()',
    'createTransport()',
  ])(
    'a %s that never settles fails one case naming the call, within timeoutMs; every transport is cleaned up',
    async (hang) => {
      const { options, counts } = hangingOnce(hang);
      const failures = await conformanceFailures(options);
      // publisher.publish() is called inside a wait (publishUntilSent), whose own deadline may
      // report first ("the probe's call had not settled").
      const named = new RegExp(
        `${hang.replace(/[.()]/g, '\\$&')} did not settle within ${TIMEOUT_MS} ms|probe's call had not settled`,
      );
      expect(failures).toEqual([expect.stringMatching(named)]);
      if (hang !== 'publisher.publish()') {
        expect(failures[0]).toContain(`conformance (review90 (${hang} hangs)): ${hang} did not settle`);
      }
      expect(counts.cleaned).toBe(counts.created);
    },
    SUITE_RUN_MS,
  );
});
