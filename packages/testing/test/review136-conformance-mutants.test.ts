/**
 * Review 136 (hostile review of @ferry/testing's transport conformance suite): broken transports
 * that passed the whole suite. A transport author ships when the suite is green, so each rule of
 * the transport contract a case names must be able to fail:
 * - a failed acceptance is reported to the consumer's observer (`acceptance-unavailable` for an
 *   outage, `acceptance-failed` otherwise; events.ts), not retried in silence;
 * - a delivery whose acceptance alone fails is dead-lettered as `acceptance_failed` (a reason an
 *   operator can group by, TRANSPORT_REJECT_REASONS), not with the error's text;
 * - a broker restart is reported (`disconnected`, reason `lost`, then `connected` again), and the
 *   readiness probe check() rejects while the consumer reports itself disconnected.
 * Harness: review28-conformance-mutants.test.ts's (the suite's jest functions recorded, each case
 * run with its hooks) against the in-memory transport with one broken piece each.
 */
import { FerryError } from '@ferry/core';
import { InMemoryBroker, type Unacked } from '@ferry/testing';
import type { TransportConformanceOptions } from '@ferry/testing/conformance';
import { inMemoryConformance, type InMemoryVariant } from './support/inMemoryConformance';
import { conformanceFailures } from './support/recordedConformance';

jest.mock('../src/conformance/jest', () =>
  jest
    .requireActual<typeof import('./support/recordedConformance')>('./support/recordedConformance')
    .recordingJest(),
);

const TIMEOUT_MS = 2_000;
/** jest's timeout of each test here: one run of the whole suite. */
const SUITE_RUN_MS = 180_000;

function inMemoryTransport(variant: InMemoryVariant = {}): TransportConformanceOptions {
  return inMemoryConformance({ name: 'in-memory (review136 variant)', timeoutMs: TIMEOUT_MS, ...variant });
}

/** The failed cases' titles, without why. */
function titles(failures: readonly string[]): string[] {
  return failures.map((failure) => failure.split(': ')[0]!);
}

/** Records a dead-lettered acceptance failure under the error's text instead of its reason. */
class ErrorTextAsReason extends InMemoryBroker {
  rewritten = 0;
  override deadLetter(item: Unacked, reason: string, detail: string): void {
    if (reason === 'acceptance_failed') this.rewritten += 1;
    super.deadLetter(item, reason === 'acceptance_failed' ? detail : reason, detail);
  }
}

describe('review136: the transport conformance suite against broken in-memory transports', () => {
  // The control (the in-memory transport as shipped passes every case) is review25/28/32's.

  // A consumer whose catch-all retries a failed batch without a word (it reports only the
  // admission limit's refusals): a database outage leaves no event, no dashboard sees it.
  it(
    'a consumer that retries failed acceptances without reporting them fails the suite',
    async () => {
      let swallowed = 0;
      const failures = await conformanceFailures(
        inMemoryTransport({
          reports: (event) => {
            const failed =
              (event.type === 'acceptance-unavailable' && !event.error.includes('ADMISSION')) ||
              event.type === 'acceptance-failed';
            if (failed) swallowed += 1;
            return !failed;
          },
        }),
      );
      expect(swallowed).toBeGreaterThan(0); // the bug did run
      expect(titles(failures)).toContain(
        'redelivers deliveries whose acceptance failed until they are accepted',
      );
    },
    SUITE_RUN_MS,
  );

  it(
    "a consumer that dead-letters a failed acceptance under the error's text instead of acceptance_failed fails the suite",
    async () => {
      const brokers: ErrorTextAsReason[] = [];
      const failures = await conformanceFailures(
        inMemoryTransport({
          broker: () => {
            const broker = new ErrorTextAsReason();
            brokers.push(broker);
            return broker;
          },
        }),
      );
      expect(brokers.reduce((sum, broker) => sum + broker.rewritten, 0)).toBeGreaterThan(0);
      expect(titles(failures)).toContain(
        'dead-letters a delivery whose acceptance alone fails, and accepts its neighbours',
      );
    },
    SUITE_RUN_MS,
  );

  // A consumer that hides a broker restart: no `disconnected`, and its probe up throughout.
  it(
    'a consumer that reports nothing of a broker restart, its probe up throughout, fails the suite',
    async () => {
      let hidden = 0;
      const failures = await conformanceFailures(
        inMemoryTransport({
          reports: (event) => {
            const lost = event.type === 'disconnected' && event.reason === 'lost';
            if (lost) hidden += 1;
            return !lost;
          },
          check: (_own, closed) =>
            closed() ? Promise.reject(new FerryError('FERRY_CLOSED', 'closed')) : Promise.resolve(),
        }),
      );
      expect(hidden).toBeGreaterThan(0);
      expect(titles(failures)).toContain(
        'loses nothing and accepts nothing twice across a broker restart mid-stream',
      );
    },
    SUITE_RUN_MS,
  );

  // Its events tell the restart, but its readiness probe answers up while it reports itself
  // disconnected: a load balancer keeps sending it work, a deploy proceeds.
  it(
    'a consumer whose check() resolves while it reports itself disconnected fails the suite',
    async () => {
      let answeredUp = 0;
      const failures = await conformanceFailures(
        inMemoryTransport({
          check: (own, closed) => {
            if (closed()) return own();
            return own().catch(() => {
              answeredUp += 1;
            });
          },
        }),
      );
      expect(answeredUp).toBeGreaterThan(0);
      expect(titles(failures)).toContain(
        'loses nothing and accepts nothing twice across a broker restart mid-stream',
      );
    },
    SUITE_RUN_MS,
  );
});
