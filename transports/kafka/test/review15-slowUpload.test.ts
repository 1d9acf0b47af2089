/**
 * Review finding (failed first), review 15 of a5fb501 (a send the cluster did not answer by confirmTimeoutMs is
 * `unavailable`, on the premise that "nothing in a record makes a broker withhold its answer").
 * A record's size does: over a link of limited bandwidth (here ~100 KB/s from ferry to the
 * broker) a 600 KB record (well within maxMessageBytes) needs ~6 s to reach the broker, longer
 * than confirmTimeoutMs (2 s), while small records on the same link are answered at once. The
 * big record is reported `unavailable` on every publish: no attempt is ever spent, it never
 * becomes FAILED, and a relay cycle holding only it (all outcomes unavailable) counts towards the
 * circuit breaker, which then stops every destination although the cluster takes other events.
 * Before a5fb501 it was `retryable` (charged, eventually FAILED). Now its first unanswered try
 * cannot be told from a silent cluster (`unavailable`), but once the cluster answered other sends
 * since, the record is charged (`retryable`).
 */
import { KafkaPublisher, deleteTopics, ensureTopics } from '../src';
import { ShapedLink } from './shapedLink';
import { endOffsets, outboxMessage, testConnection, uniqueName, waitFor } from './support';

jest.setTimeout(120_000);

const admin = testConnection();
const topic = uniqueName('review15-slow-upload');
/** At most 10,000 bytes to the broker per 100 ms: ~100 KB/s upstream. */
let link: ShapedLink;

beforeAll(async () => {
  await ensureTopics(admin, [{ topic, partitions: 1 }]);
  link = await ShapedLink.start({ upstreamBytesPerTick: 10_000 });
});

afterAll(async () => {
  await link.close();
  await deleteTopics(admin, [topic]);
});

test('a record too big for the link within confirmTimeoutMs, while small ones are answered: charged, not unavailable for ever', async () => {
  const connection = link.connection('ferry-review15-slow-upload');
  const publisher = new KafkaPublisher(connection, { confirmTimeoutMs: 2_000 });
  const big = outboxMessage({ destination: topic, payload: { filler: 'x'.repeat(600_000) } });
  const seen: string[] = [];
  try {
    for (let cycle = 0; cycle < 3; cycle += 1) {
      const [small] = await publisher.publish(
        [outboxMessage({ destination: topic, payload: { cycle } })],
        new AbortController().signal,
      );
      seen.push(`small:${small!.status}`);
      const [outcome] = await publisher.publish([big], new AbortController().signal);
      seen.push(`big:${outcome!.status}`);
      // The given-up upload finishes meanwhile (the next publish would wait for it): both records
      // of the cycle are on the topic (one partition) before the next.
      const written = 2 * (cycle + 1);
      await waitFor(
        async () => Number((await endOffsets(admin, topic)).get(0) ?? '0') >= written,
        () => `the topic never held ${written} records`,
        60_000,
      );
    }
    // Before: small sent, big unavailable, three times: the cluster answered every small send.
    expect(seen.filter((s) => s.startsWith('small:'))).toEqual(['small:sent', 'small:sent', 'small:sent']);
    expect(seen.filter((s) => s.startsWith('big:'))).toEqual([
      'big:unavailable',
      'big:retryable',
      'big:retryable',
    ]);
  } finally {
    await publisher.close();
  }
});
