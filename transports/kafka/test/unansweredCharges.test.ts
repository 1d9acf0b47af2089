/**
 * When the Kafka publisher charges an attempt for a send the cluster left unanswered
 * (UnansweredLedger, review 15's rule: a record unanswered again after the cluster answered other
 * sends since is too slow to send, `retryable`). Two ways that rule charged what it should not
 * (noted after review 33 found both in the SQS publisher, which probes since):
 *
 * - A second silent outage: a record left unanswered by one outage, the cluster answering other
 *   sends after it, is charged on its first try in the next outage, although nothing at all is
 *   answered while it is tried. A network that drops packets now and then spent an attempt per
 *   record per outage, and a relay turned healthy events FAILED at maxRetries.
 * - Neighbours: a batch holding one record too large for a slow uplink within confirmTimeoutMs
 *   goes unanswered whole, so every record of it was charged on the next try, the small ones with
 *   the large one, and they went FAILED together.
 */
import { KafkaPublisher, deleteTopics, ensureTopics } from '../src';
import { ShapedLink } from './shapedLink';
import { outboxMessage, testConnection, uniqueName, waitFor } from './support';
import type { OutboxMessage } from '@ferry/core';

jest.setTimeout(120_000);

const admin = testConnection();
const topic = uniqueName('unanswered-charges');
let link: ShapedLink | undefined;
let publisher: KafkaPublisher | undefined;

beforeAll(async () => {
  await ensureTopics(admin, [{ topic, partitions: 1 }]);
});

afterEach(async () => {
  await publisher?.close();
  await link?.close();
});

afterAll(async () => {
  await deleteTopics(admin, [topic]);
});

const statuses = async (messages: readonly OutboxMessage[]): Promise<string[]> =>
  (await publisher!.publish(messages, new AbortController().signal)).map((outcome) => outcome.status);

test('a record tried during a second silent outage spends no attempt (unavailable, as in the first)', async () => {
  link = await ShapedLink.start({});
  const connection = link.connection('ferry-unanswered-second-outage', { requestTimeoutMs: 3_000 });
  publisher = new KafkaPublisher(connection, { confirmTimeoutMs: 2_000 });
  expect(await statuses([outboxMessage({ destination: topic, payload: { warm: true } })])).toEqual(['sent']);
  const event = outboxMessage({ destination: topic, payload: { n: 1 } });

  const seen: string[] = [];
  // A first silent outage (packets dropped): unavailable, no attempt spent.
  link.setSilent(true);
  seen.push(...(await statuses([event])));
  // The network is back: the cluster answers the relay's other publishes.
  link.setSilent(false);
  seen.push(...(await statuses([outboxMessage({ destination: topic, payload: { n: 2 } })])));
  // A second silent outage before the event's next cycle: nothing is answered at all.
  link.setSilent(true);
  seen.push(...(await statuses([event])));
  // Before: the last was 'retryable', the event charged an attempt by the outage.
  expect(seen).toEqual(['unavailable', 'sent', 'unavailable']);
});

test("a record too large for a slow uplink is charged alone: its batch's small records are not", async () => {
  // At most 10,000 bytes to the broker per 100 ms: ~100 KB/s upstream.
  link = await ShapedLink.start({ upstreamBytesPerTick: 10_000 });
  const connection = link.connection('ferry-unanswered-neighbours');
  publisher = new KafkaPublisher(connection, { confirmTimeoutMs: 2_000 });
  const small1 = outboxMessage({ destination: topic, payload: { n: 1 } });
  const big = outboxMessage({ destination: topic, payload: { filler: 'x'.repeat(600_000) } });
  const small2 = outboxMessage({ destination: topic, payload: { n: 2 } });

  // The batch goes unanswered within confirmTimeoutMs (the large record takes ~6 s to upload).
  expect(await statuses([small1, big, small2])).toEqual(['unavailable', 'unavailable', 'unavailable']);
  // The given-up upload finishes meanwhile (the next send would wait for it).
  await waitFor(
    () => link!.queuedUpstreamBytes === 0,
    () => `the given-up upload still holds ${link!.queuedUpstreamBytes} bytes`,
  );
  expect(await statuses([outboxMessage({ destination: topic, payload: { n: 3 } })])).toEqual(['sent']);

  // Tried again: the large record is charged, its small neighbours are not (before: all three
  // `retryable`, so the relay turned them FAILED with it).
  const again = await statuses([small1, big, small2]);
  expect(again[1]).toBe('retryable');
  expect(again[0]).toBe('sent');
  expect(again[2]).not.toBe('retryable');
  expect(again[2]).not.toBe('permanent');
});
