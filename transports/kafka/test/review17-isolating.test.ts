/**
 * Review finding (failed first), review 17 (failed on 9fa2507; passes with the new one-at-a-time shortcut in
 * KafkaPublisher.sendAll disabled): records remembered as `isolating` skip the check of suspect
 * topics, so a record to a topic the cluster does not have is handed to the client publish after
 * publish; the whole batch is then `unavailable` for ever on a healthy, fast cluster.
 *
 * A link slow only for a moment (300 ms answers, confirmTimeoutMs 500 ms) makes the producer's
 * replacement after a refused batch (MESSAGE_TOO_LARGE) slower than the deadline, so its
 * one-at-a-time sends stop before finding the refused record and its records are remembered
 * (HEAD's new `isolating`). A record to a missing topic then makes that topic suspect (alone,
 * unanswered within 500 ms: `unavailable`).
 * Once the link is fast again, the relay claims the missing-topic row with the remembered ones:
 * sendAll goes one at a time *before* `topics.missing`, so the missing-topic record is sent
 * (not checked); kafkajs waits for the topic past confirmTimeoutMs; unanswered with nothing
 * answered since its last try, it is `unavailable`, which stops the rest, and since nothing
 * refused was found every record is remembered again. Publish after publish nothing goes, no
 * attempt is spent (a relay's circuit opens on a healthy cluster), and the healthy record behind
 * it is never sent. The README promises a suspect topic is checked before the next send to it;
 * without the shortcut the check holds the missing-topic record `retryable` and the others go
 * in the same publish (the healthy one `sent`, the refused one `permanent`).
 *
 * Review finding (failed first), review 17 (failed on 9fa2507): HEAD's `isolating` memory spreads to records that were
 * never in a refused batch. The README and the code comment say the records remembered (sent one
 * at a time when published again, no batch try) are those of "a refused batch whose one-at-a-time
 * sends stopped before finding the refused one". But sendOneByOne remembers every `unavailable`
 * record of any one-at-a-time publish that found nothing refused, and HEAD's shortcut sends a
 * whole publish one at a time as soon as one of its records is remembered. So once a refused
 * batch was remembered, a cluster outage (connections cut) turns every healthy record published
 * alongside it (a relay's batch claimed during the outage) into a remembered one: after the
 * outage those records, published without any refused record, go one send per record (each its
 * own confirmTimeoutMs, no batch), where they should go in one send. On a relay that is a batch
 * (batchSize rows, up to 10,000 remembered) sent one round trip per row after every outage.
 */
import { KafkaPublisher, deleteTopics, ensureTopics } from '../src';
import { ShapedLink } from './shapedLink';
import { outboxMessage, testConnection, uniqueName } from './support';

jest.setTimeout(120_000);

const admin = testConnection();
const topic = uniqueName('review17-isolating');
const missingTopic = uniqueName('review17-never-created');
let link: ShapedLink;

beforeAll(async () => {
  await ensureTopics(admin, [{ topic, partitions: 1, configs: { 'max.message.bytes': '2000' } }]);
  link = await ShapedLink.start({});
});

afterAll(async () => {
  await link.close();
  await deleteTopics(admin, [topic]);
});

const never = new AbortController().signal;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A healthy record and a refused one published together during a moment of slow answers: the
 * batch is refused, its producer's replacement slower than the deadline, so both are remembered
 * (isolating). The link is fast again when it resolves.
 */
async function rememberRefusedPair(publisher: KafkaPublisher) {
  expect((await publisher.publish([outboxMessage({ destination: topic })], never))[0]!.status).toBe('sent');
  link.answerDelayMs = 300;
  const healthy = outboxMessage({ destination: topic, payload: { n: 0 } });
  const refused = outboxMessage({ destination: topic, payload: { filler: 'x'.repeat(5_000) } });
  await publisher.publish([healthy, refused], never);
  await sleep(3_000);
  link.answerDelayMs = 0;
  return { healthy, refused };
}

test('remembered records published with one to a suspect missing topic: the topic is checked and the others go', async () => {
  const publisher = new KafkaPublisher(link.connection('ferry-review17-shortcut'), { confirmTimeoutMs: 500 });
  try {
    const { healthy, refused } = await rememberRefusedPair(publisher);
    await sleep(1_000);

    // A record to a topic the cluster does not have: unanswered within 500 ms, its topic suspect.
    const lost = outboxMessage({ destination: missingTopic, payload: { lost: true } });
    await publisher.publish([lost], never);
    await sleep(2_000);

    const statuses = new Map<string, string[]>();
    let pending = [lost, healthy, refused];
    for (let cycle = 0; cycle < 4 && pending.length > 0; cycle += 1) {
      const outcomes = await publisher.publish(pending, never);
      for (const outcome of outcomes)
        statuses.set(outcome.id, [...(statuses.get(outcome.id) ?? []), outcome.status]);
      // As a relay: the rows not settled come back (the missing-topic one too: retryable).
      pending = pending.filter((_, index) => ['unavailable', 'retryable'].includes(outcomes[index]!.status));
      await sleep(1_000);
    }
    expect(statuses.get(healthy.id)!.at(-1)).toBe('sent');
    expect(statuses.get(refused.id)).toContain('permanent');
    // The suspect topic is checked (retryable: the topic's fault, an attempt spent).
    expect(statuses.get(lost.id)).toContain('retryable');
  } finally {
    await publisher.close();
  }
});

test('healthy records published with remembered ones during an outage go as one send afterwards', async () => {
  const connection = link.connection('ferry-review17-spread');
  const sends: number[] = [];
  const makeProducer = connection.driver.clientProducer.bind(connection.driver);
  jest.spyOn(connection.driver, 'clientProducer').mockImplementation((producerOptions) => {
    const real = makeProducer(producerOptions);
    return {
      connect: () => real.connect(),
      disconnect: () => real.disconnect(),
      destroy: () => real.destroy(),
      onDisconnect: (listener) => real.onDisconnect(listener),
      send: (batches) => {
        sends.push(batches.reduce((count, batch) => count + batch.records.length, 0));
        return real.send(batches);
      },
    };
  });
  const publisher = new KafkaPublisher(connection, { confirmTimeoutMs: 500 });
  try {
    const { healthy, refused } = await rememberRefusedPair(publisher);

    // The cluster goes down; the relay's batch holds the remembered rows and new healthy ones.
    link.setDown(true);
    const fresh = [1, 2, 3, 4].map((n) => outboxMessage({ destination: topic, payload: { fresh: n } }));
    await publisher.publish([healthy, refused, ...fresh], never);
    link.setDown(false);
    await sleep(3_000);

    // After the outage, the healthy rows alone (the others settled elsewhere): one send.
    sends.length = 0;
    let outcomes = await publisher.publish(fresh, never);
    for (let cycle = 0; cycle < 3 && outcomes.some((o) => o.status !== 'sent'); cycle += 1) {
      await sleep(1_000);
      sends.length = 0;
      outcomes = await publisher.publish(fresh, never);
    }
    expect(outcomes.map((o) => o.status)).toEqual(['sent', 'sent', 'sent', 'sent']);
    expect(sends).toEqual([4]);
  } finally {
    await publisher.close();
  }
});
