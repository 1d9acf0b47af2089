/**
 * Review 90, failing test: a consumer that reports its settlements twice passes the conformance
 * suite.
 *
 * What I did: ran `runTransportConformance` on the in-memory transport whose consumer reports every
 * `settled` event twice (an ack path that reports the ack once when sent and again when the broker
 * confirms it: the bug behind a settled counter twice the deliveries).
 * What happened: every case passed. The observer case waits for `settled` to reach the number of
 * messages (`>=`) and checks `accepted` exactly, but never that no more deliveries were reported
 * settled than were received (`events.ts`: settled = "acks confirmed to the broker for `count`
 * deliveries"), so dashboards built on the observer show twice the acks.
 * What should happen: the case fails when the settled count exceeds the received count.
 */
import type { TransportConsumerEvent } from '@ferry/core/transport';
import type { TransportConformanceOptions } from '@ferry/testing/conformance';
import { inMemoryConformance } from './support/inMemoryConformance';
import { conformanceFailures } from './support/recordedConformance';

jest.mock('../src/conformance/jest', () =>
  jest
    .requireActual<typeof import('./support/recordedConformance')>('./support/recordedConformance')
    .recordingJest(),
);

const TIMEOUT_MS = 2_000;

/** The in-memory transport whose consumer reports each `settled` event twice. */
function settledTwice(): TransportConformanceOptions {
  const base = inMemoryConformance({ name: 'review90 (settled twice)', timeoutMs: TIMEOUT_MS });
  return {
    ...base,
    async createTransport(context) {
      const transport = await base.createTransport(context);
      return {
        ...transport,
        attach: (acceptor, { consumer, observer }) =>
          transport.attach(acceptor, {
            consumer,
            observer: (event: TransportConsumerEvent) => {
              observer(event);
              if (event.type === 'settled') observer(event);
            },
          }),
      };
    },
  };
}

describe('review90: the conformance suite against a consumer that reports its settlements twice', () => {
  it('fails the observer case', async () => {
    const failures = await conformanceFailures(settledTwice());
    expect(failures).toEqual([
      expect.stringContaining('reports received, then accepted and settled, for delivered messages'),
    ]);
  }, 120_000);
});
