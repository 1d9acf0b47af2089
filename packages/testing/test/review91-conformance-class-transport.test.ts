/**
 * Review 91, failing test: the conformance suite loses what a transport under test keeps on its
 * prototype.
 *
 * What I did: wrote my transport under test as a class (`destination`, `source` and
 * `unroutableDestination` getters, methods on the prototype), a natural way to write a third-party
 * transport's test double, and ran `runTransportConformance` on it.
 * What happened: since review 90 the suite wraps the transport to bound its calls
 * (`conformance/bounded.ts`) with an object spread, `{ ...transport, ... }`, which copies own
 * properties only: the getters were gone, every case published to destination `undefined` and
 * read events of source `undefined`, and most cases failed on a transport that conforms.
 * What should happen: the bounded transport reads every member of the transport it wraps.
 */
import type { InboxAcceptor, Publisher } from '@ferry/core';
import type {
  AttachContext,
  AttachedConsumer,
  DeadLetter,
  RawMessage,
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

/** The in-memory transport under test, as a class: its members live on the prototype. */
class ClassTransport implements TransportUnderTest {
  constructor(private readonly inner: TransportUnderTest) {}
  get publisher(): Publisher & { close(): Promise<void> } {
    return this.inner.publisher;
  }
  get destination(): string | null {
    return this.inner.destination;
  }
  get source(): string {
    return this.inner.source;
  }
  get unroutableDestination(): string | undefined {
    return this.inner.unroutableDestination;
  }
  attach(acceptor: InboxAcceptor, context: AttachContext): Promise<AttachedConsumer> {
    return this.inner.attach(acceptor, context);
  }
  publishRaw(message: RawMessage): Promise<void> {
    return this.inner.publishRaw(message);
  }
  readDeadLetters(): Promise<readonly DeadLetter[]> {
    return this.inner.readDeadLetters();
  }
  heldCount(): Promise<number> {
    return this.inner.heldCount!();
  }
  cleanup(): Promise<void> {
    return this.inner.cleanup();
  }
}

function classTransport(): TransportConformanceOptions {
  const base = inMemoryConformance({ name: 'review91 (class)', timeoutMs: 5_000 });
  return {
    ...base,
    async createTransport(context) {
      return new ClassTransport(await base.createTransport(context));
    },
  };
}

describe('review91: the conformance suite on a transport under test written as a class', () => {
  it('passes every case', async () => {
    expect(await conformanceFailures(classTransport())).toEqual([]);
  }, 120_000);
});
