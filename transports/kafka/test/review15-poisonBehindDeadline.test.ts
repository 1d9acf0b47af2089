/**
 * Review finding (failed first), review 15 (b): a record the topic refuses (MESSAGE_TOO_LARGE,
 * the topic's max.message.bytes) sent with healthy records to a slow cluster (each answer 700 ms
 * late). The batch send holding it went unanswered within confirmTimeoutMs, so every record of it
 * was `unavailable`, publish after publish: the healthy records never went and the refused one
 * was never found (no attempt spent). In a relay the all-unavailable cycles opened the circuit and
 * the records were later charged together, neighbours included.
 */
import { KafkaPublisher, deleteTopics, ensureTopics } from '../src';
import { ShapedLink } from './shapedLink';
import { outboxMessage, testConnection, uniqueName } from './support';

jest.setTimeout(120_000);

const admin = testConnection();
const topic = uniqueName('review15-poison-slow');
let link: ShapedLink;

beforeAll(async () => {
  await ensureTopics(admin, [{ topic, partitions: 1, configs: { 'max.message.bytes': '2000' } }]);
  link = await ShapedLink.start({ answerDelayMs: 700 });
});

afterAll(async () => {
  await link.close();
  await deleteTopics(admin, [topic]);
});

test.each([2_000, 3_000])(
  'a refused record behind healthy ones on a slow cluster (confirmTimeoutMs %i): the healthy ones go, the refused one is charged',
  async (confirmTimeoutMs) => {
    const connection = link.connection(`ferry-review15-poison-${confirmTimeoutMs}`);
    const publisher = new KafkaPublisher(connection, { confirmTimeoutMs });
    const healthy = [0, 1, 2].map((n) => outboxMessage({ destination: topic, payload: { n } }));
    const refused = outboxMessage({ destination: topic, payload: { filler: 'x'.repeat(5_000) } });
    const after = [3, 4].map((n) => outboxMessage({ destination: topic, payload: { n } }));
    const batch = [...healthy, refused, ...after];
    const statuses = new Map<string, string[]>();
    try {
      let pending = batch;
      for (let cycle = 0; cycle < 4 && pending.length > 0; cycle += 1) {
        const outcomes = await publisher.publish(pending, new AbortController().signal);
        for (const outcome of outcomes)
          statuses.set(outcome.id, [...(statuses.get(outcome.id) ?? []), outcome.status]);
        pending = pending.filter((message, index) => {
          const status = outcomes[index]!.status;
          return status === 'unavailable' || (status === 'retryable' && message.id !== refused.id);
        });
      }
      for (const message of [...healthy, ...after]) {
        const seen = statuses.get(message.id)!;
        expect(seen[seen.length - 1]).toBe('sent');
        expect(seen.filter((status) => status === 'retryable' || status === 'permanent')).toEqual([]);
      }
      const refusedSeen = statuses.get(refused.id)!;
      expect(refusedSeen.some((status) => status === 'retryable' || status === 'permanent')).toBe(true);
    } finally {
      await publisher.close();
    }
  },
);
