/**
 * Review 91, failing test: a transport or consumer the conformance suite gave up on is never
 * closed when it arrives late.
 *
 * What I did: ran `runTransportConformance` (timeoutMs 1 s) on a transport whose first
 * `createTransport()` (then, separately, whose first `attach()`) answers only after the suite's
 * deadline: slow, not hung (a topic created on a loaded broker).
 * What happened: review 90 bounds each call at timeoutMs and fails the case naming it, but what
 * the call answered afterwards was dropped: the late transport was never cleaned up (its
 * connections and queue / topic left behind, jest kept open) and the late consumer never closed,
 * consuming on for the rest of the run, taking the next cases' messages.
 * What should happen: what a call the suite gave up on answers later is closed then: cleanup() of a
 * late transport, close() of a late consumer.
 */
import type { TransportConformanceOptions, TransportUnderTest } from '@ferry/testing/conformance';
import { waitUntil } from '@ferry/testing';
import { inMemoryConformance } from './support/inMemoryConformance';
import { conformanceFailures } from './support/recordedConformance';

jest.mock('../src/conformance/jest', () =>
  jest
    .requireActual<typeof import('./support/recordedConformance')>('./support/recordedConformance')
    .recordingJest(),
);

const TIMEOUT_MS = 1_000;

/** The in-memory transport whose first `late` call answers only once `release()` is called. */
function lateOnce(late: 'createTransport()' | 'attach()') {
  const base = inMemoryConformance({ name: `review91 (${late} late)`, timeoutMs: TIMEOUT_MS });
  const counts = { created: 0, cleaned: 0, lateClosed: false };
  let release = (): void => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let held = false;
  const holdOnce = async (what: typeof late): Promise<void> => {
    if (held || what !== late) return;
    held = true;
    await gate;
  };
  const counted = (transport: TransportUnderTest): TransportUnderTest => ({
    ...transport,
    async attach(acceptor, context) {
      const consumer = await transport.attach(acceptor, context);
      const wasLate = !held && late === 'attach()';
      await holdOnce('attach()');
      return {
        ready: () => consumer.ready(),
        check: () => consumer.check(),
        close: () => {
          if (wasLate) counts.lateClosed = true;
          return consumer.close();
        },
      };
    },
    async cleanup() {
      counts.cleaned += 1;
      await transport.cleanup();
    },
  });
  const options: TransportConformanceOptions = {
    ...base,
    async createTransport(context) {
      const transport = counted(await base.createTransport(context));
      counts.created += 1;
      await holdOnce('createTransport()');
      return transport;
    },
  };
  return { options, counts, release };
}

describe('review91: what the conformance suite gave up on is closed when it arrives', () => {
  it('a createTransport() answering after timeoutMs: its transport is cleaned up', async () => {
    const { options, counts, release } = lateOnce('createTransport()');
    const failures = await conformanceFailures(options);
    expect(failures).toEqual([expect.stringContaining('createTransport() did not settle within')]);
    release();
    await waitUntil('every transport cleaned up', () => counts.cleaned === counts.created, {
      timeoutMs: 10_000,
    });
  }, 120_000);

  it('an attach() answering after timeoutMs: its consumer is closed', async () => {
    const { options, counts, release } = lateOnce('attach()');
    const failures = await conformanceFailures(options);
    expect(failures).toEqual([expect.stringContaining('attach() did not settle within')]);
    release();
    await waitUntil('the late consumer closed', () => counts.lateClosed, {
      timeoutMs: 10_000,
    });
  }, 120_000);
});
