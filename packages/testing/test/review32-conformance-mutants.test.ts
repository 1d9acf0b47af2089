/**
 * Review 32 of 80f4abc (hostile review of the strengthened transport conformance suite,
 * packages/testing/src/conformance/): broken transports that still pass the whole suite.
 *
 * The defect is in the suite: a transport author "runs `runTransportConformance` and ships when
 * it is green" (docs/conformance.md), so each part of the inbound contract must be able to fail.
 * The contract (Kafka's README, "Inbound, a record becomes `InboxAcceptInput { consumer,
 * messageId, tenantId, type, payload, headers }`: ... `type` from `x-ferry-event-type`; every
 * header whose name and value are text PostgreSQL stores faithfully ... except
 * `x-ferry-transport-attempts` and `x-ferry-reject-reason`"; RabbitMQ's README: `x-ferry-event-type`
 * is sent as "an application header (passed to the inbox)").
 *
 * Why it matters: the inbox stores `type` as the receipt's messageType that handlers and metrics
 * see; it reads the correlation id and trace context of a handled message from the stored headers
 * (core src/tracing/messageScope.ts), so the events a handler emits inherit them. A transport that
 * loses either, consuming or publishing, ships green and breaks every handler that switches on
 * the type, or every trace and correlation chain through the inbox. The suite's messages carry
 * the type 'conformance.event' but no case reads an accepted input's type, and none carries a
 * correlation id, causation id, traceparent or header of its own.
 *
 * Harness: review 28's (test/support/recordedConformance.ts, test/support/inMemoryConformance.ts);
 * each test swaps one broken piece into the in-memory transport and expects at least one case to
 * fail. Each fails on HEAD because the whole suite passes.
 */
import { FERRY_HEADERS } from '@ferry/core';
import { InMemoryBroker, type InMemoryDelivery } from '@ferry/testing';
import type { TransportConformanceOptions } from '@ferry/testing/conformance';
import { inMemoryConformance, type InMemoryVariant } from './support/inMemoryConformance';
import { conformanceFailures } from './support/recordedConformance';

jest.mock('../src/conformance/jest', () =>
  jest
    .requireActual<typeof import('./support/recordedConformance')>('./support/recordedConformance')
    .recordingJest(),
);

const TIMEOUT_MS = 2_000;
/** jest's timeout of each test here: one run of the whole suite, about twenty cases. */
const SUITE_RUN_MS = 180_000;

function inMemoryTransport(variant: InMemoryVariant = {}): TransportConformanceOptions {
  return inMemoryConformance({ name: 'in-memory (review32 variant)', timeoutMs: TIMEOUT_MS, ...variant });
}

describe('review32: the transport conformance suite against broken in-memory transports', () => {
  it(
    'control: the in-memory transport as shipped passes every case',
    async () => {
      expect(await conformanceFailures(inMemoryTransport())).toEqual([]);
    },
    SUITE_RUN_MS,
  );

  // A consumer that never reads x-ferry-event-type (or reads the wrong header) and hands the inbox
  // every message with type null: every receipt's messageType is lost.
  it(
    'a consumer that loses the event type (x-ferry-event-type) fails the suite',
    async () => {
      let lost = 0;
      const failures = await conformanceFailures(
        inMemoryTransport({
          inputs: (input) => {
            if (input.type) lost += 1;
            return { ...input, type: null };
          },
        }),
      );
      expect(lost).toBeGreaterThan(0); // the bug did run
      expect(failures).not.toEqual([]);
    },
    SUITE_RUN_MS,
  );

  // A consumer whose reserved-name filter is too broad: it drops ferry's own correlation id,
  // causation id and trace context with the forged ones, so the inbox can no longer link what a
  // handler emits to the message it handled.
  it(
    "a consumer that drops ferry's own correlation, causation and trace headers fails the suite",
    async () => {
      const dropped = new Set<string>([
        FERRY_HEADERS.correlationId,
        FERRY_HEADERS.causationId,
        FERRY_HEADERS.traceparent,
        FERRY_HEADERS.tracestate,
      ]);
      const failures = await conformanceFailures(
        inMemoryTransport({
          inputs: (input) => ({
            ...input,
            headers: Object.fromEntries(
              Object.entries(input.headers ?? {}).filter(([name]) => !dropped.has(name)),
            ),
          }),
        }),
      );
      expect(failures).not.toEqual([]);
    },
    SUITE_RUN_MS,
  );

  // The same loss on the publishing side: a publisher that writes only the id and tenant headers
  // (Kafka's README, outbound: "the event's own `headers` ..., then ferry's on top: `x-ferry-message-id`
  // (event id), `x-ferry-event-type`, `x-ferry-tenant-id`, `x-ferry-correlation-id`,
  // `x-ferry-causation-id`, `traceparent`, `tracestate`"). Every message of the suite has
  // `headers: {}` and no correlation id or trace context, and no case reads the type: it passes.
  it(
    'a publisher that sends only the id and tenant headers (no type, no event headers) fails the suite',
    async () => {
      let stripped = 0;
      class IdAndTenantOnly extends InMemoryBroker {
        override send(queue: string, delivery: InMemoryDelivery): boolean {
          const headers = delivery.headers;
          // Only the publisher's deliveries carry ferry's id header; publishRaw's use the native id.
          if (headers[FERRY_HEADERS.messageId] === undefined) return super.send(queue, delivery);
          const kept: Record<string, string> = {
            [FERRY_HEADERS.messageId]: headers[FERRY_HEADERS.messageId]!,
          };
          const tenant = headers[FERRY_HEADERS.tenantId];
          if (tenant !== undefined) kept[FERRY_HEADERS.tenantId] = tenant;
          if (Object.keys(headers).length > Object.keys(kept).length) stripped += 1;
          return super.send(queue, { ...delivery, headers: kept });
        }
      }
      const failures = await conformanceFailures(inMemoryTransport({ broker: () => new IdAndTenantOnly() }));
      expect(stripped).toBeGreaterThan(0); // the bug did run
      expect(failures).not.toEqual([]);
    },
    SUITE_RUN_MS,
  );
});
