/**
 * Review 77: broken transports a user might write that still pass the transport conformance suite.
 *
 * README (`@ferry/testing/conformance`): the suite registers the tests "every transport must
 * pass"; its first case "reports every published message sent and accepts each exactly once, as
 * it was published" and checks that what the inbox stores is "the message the application
 * emitted: its payload". Every payload and body the suite sends is ASCII (`{ index }`, `{"n":1}`),
 * so a transport that does not carry text as UTF-8 (a publisher writing `Buffer.from(json,
 * 'latin1')` / `'binary'`, a consumer reading `body.toString('latin1')`) passes, and corrupts
 * every non-ASCII payload ("Zoë", "€", any emoji) of the application that ships it.
 *
 * Harness: review 28's (test/support/recordedConformance.ts, test/support/inMemoryConformance.ts).
 * Each test first shows that its variant corrupts a non-ASCII payload, then expects at least one
 * conformance case to fail; each fails on HEAD because the whole suite passes.
 */
import { FERRY_HEADERS, type InboxAcceptInput } from '@ferry/core';
import { InMemoryBroker, type InMemoryDelivery } from '@ferry/testing';
import type { TransportConformanceOptions } from '@ferry/testing/conformance';
import { outboxMessageFixture } from '../src/conformance/messages';
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
const NON_ASCII = { customer: 'Zoë Brontë', total: '12 €', note: '✓ 注文' };

function inMemoryTransport(variant: InMemoryVariant = {}): TransportConformanceOptions {
  return inMemoryConformance({ name: 'in-memory (review77 variant)', timeoutMs: TIMEOUT_MS, ...variant });
}

/** A broker whose publisher writes each body's JSON text as latin1 instead of UTF-8. */
class Latin1Publisher extends InMemoryBroker {
  override send(queue: string, delivery: InMemoryDelivery): boolean {
    // Only the publisher's deliveries carry ferry's id header; publishRaw's use the native id.
    if (delivery.headers[FERRY_HEADERS.messageId] === undefined) return super.send(queue, delivery);
    return super.send(queue, { ...delivery, body: Buffer.from(delivery.body.toString('utf8'), 'latin1') });
  }
}

/** What a consumer that reads the body as latin1 hands the inbox. */
function readAsLatin1(input: InboxAcceptInput): InboxAcceptInput {
  const bytes = Buffer.from(JSON.stringify(input.payload), 'utf8');
  return { ...input, payload: JSON.parse(bytes.toString('latin1')) as InboxAcceptInput['payload'] };
}

describe('review77: the transport conformance suite against transports that mangle non-ASCII text', () => {
  it(
    'a publisher that encodes the payload as latin1 instead of UTF-8 fails the suite',
    async () => {
      // The variant is broken: a non-ASCII payload arrives changed.
      const broker = new Latin1Publisher();
      broker.declareQueue('q');
      const message = outboxMessageFixture({ destination: 'q', payload: NON_ASCII });
      await broker.publisher().publish([message], new AbortController().signal);
      const [taken] = broker.take('q', 1);
      expect(taken!.delivery.body.toString('utf8')).not.toBe(JSON.stringify(NON_ASCII));

      const failures = await conformanceFailures(inMemoryTransport({ broker: () => new Latin1Publisher() }));
      expect(failures).not.toEqual([]);
    },
    SUITE_RUN_MS,
  );

  it(
    'a consumer that decodes the body as latin1 instead of UTF-8 fails the suite',
    async () => {
      // The variant is broken: a non-ASCII payload reaches the inbox changed.
      const sample = { consumer: 'c', messageId: 'm', tenantId: null, payload: NON_ASCII, headers: {} };
      expect(readAsLatin1(sample as unknown as InboxAcceptInput).payload).not.toEqual(NON_ASCII);

      const failures = await conformanceFailures(inMemoryTransport({ inputs: readAsLatin1 }));
      expect(failures).not.toEqual([]);
    },
    SUITE_RUN_MS,
  );
});
