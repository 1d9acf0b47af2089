/**
 * Review 110: a partition held behind a transaction another producer left open.
 *
 * ferry's consumers read read_committed (kafkajs's default isolation, not overridden; the
 * platformatic driver's fetches ask for it too): no record past the partition's last stable
 * offset is delivered until the open transaction ends (the broker aborts it after the producer's
 * transaction.timeout.ms, 60 s by default, up to 15 minutes). The records written behind it, by
 * ferry's publisher too, wait. The consumer observer's `lag` was reported only after a commit,
 * so such a partition kept its last value (0) and an operator saw nothing.
 *
 * The Java client (ForeignProducer 'open:SECONDS') sends a record in a transaction it leaves open,
 * then plain records behind it, and aborts it SECONDS later. While it is open, nothing behind it
 * is accepted, and the consumer must report the partition's lag: the 3 records from the held one
 * on. @platformatic/kafka only (this file has no kafkajs twin): kafkajs hands over no fetch without records, nor its high
 * watermark, and its admin's ListOffsets answers the last stable offset (kafkajs consumers stay
 * silent there; see the review 110 report).
 */
import './use';
import { FERRY_HEADERS } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { ConsumerHarness } from '../consumerHarness';
import { produceWithJava, type ForeignRecord } from '../javaProducer';
import { waitFor } from '../support';

jest.setTimeout(240_000);

/**
 * How long the transaction stays open: the bound within which the lag must show. The lag is
 * reported every LAG_REPORT_INTERVAL_MS (5 s) from the latest fetch (200 ms polls here), so 30 s
 * leaves that bound room several times over; the test waits for the abort, so more costs its wall.
 */
const OPEN_SECONDS = 30;

let harness: ConsumerHarness;
beforeAll(async () => {
  harness = await ConsumerHarness.create();
});
afterAll(async () => {
  await harness.close();
});

function record(id: string, mode: ForeignRecord['mode'] = 'plain'): ForeignRecord {
  return { mode, value: JSON.stringify({ id }), headers: [[FERRY_HEADERS.messageId, id]] };
}

function lags(events: readonly TransportConsumerEvent[]): number[] {
  return events.flatMap((event) => (event.type === 'lag' ? [event.lag] : []));
}

it('a partition held behind an open transaction reports its lag while nothing behind it is accepted', async () => {
  const topic = await harness.topicPair('review110-open', 1);
  const { events } = await harness.start(topic, 'review110-open');
  const accepted = async (): Promise<string[]> =>
    (await harness.acceptor.rows('review110-open')).map((row) => row.messageId);

  const produced = produceWithJava(topic, [
    record('before'),
    record('held', `open:${OPEN_SECONDS}`),
    record('behind-1'),
    record('behind-2'),
  ]);
  const openedAt = Date.now();
  try {
    await waitFor(
      async () => (await accepted()).includes('before') && lags(events).includes(0),
      () => `the record before the transaction was not accepted and committed: ${JSON.stringify(events)}`,
    );
    const seen = events.length;
    // While the transaction is open (it is aborted OPEN_SECONDS after it was sent): the lag of
    // the 3 records from the held one on is reported, and nothing behind the transaction is accepted.
    await waitFor(
      () => lags(events.slice(seen)).includes(3),
      () =>
        `no lag 3 reported ${Math.round((Date.now() - openedAt) / 1000)} s into the open transaction; ` +
        `lags since the commit: ${JSON.stringify(lags(events.slice(seen)))}`,
      (OPEN_SECONDS - 10) * 1000,
    );
    expect(await accepted()).toEqual(['before']);
  } finally {
    await produced;
  }

  // Once the transaction is aborted, the records behind it are delivered and the lag is 0 again.
  let rows: string[] = [];
  await waitFor(
    async () => (rows = await accepted()).length === 3,
    () => `records behind the aborted transaction not accepted: ${JSON.stringify(rows)}`,
  );
  expect((await accepted()).sort()).toEqual(['before', 'behind-1', 'behind-2']);
  await waitFor(
    () => lags(events).at(-1) === 0,
    () => `last lag not 0: ${JSON.stringify(lags(events))}`,
  );
});
