/**
 * A dead-lettered delivery's message id is reported bounded and on one line: an invalid delivery's
 * id has no limit yet (a Kafka header can hold about 1 MB), and every observer event and log line
 * carried it whole, control characters included (review 37's note).
 */
import { consumerEmitter, reportedMessageId, type TransportConsumerEvent } from '@ferry/core/transport';

it('cuts a long id, says its length and escapes what would leave its line', () => {
  expect(reportedMessageId(null)).toBeNull();
  expect(reportedMessageId('order-7')).toBe('order-7');
  const long = reportedMessageId('x'.repeat(1_000_000))!;
  expect(long.length).toBeLessThan(300);
  expect(long).toMatch(/\(1000000 characters\)$/);
  expect(reportedMessageId('a\nforged: yes\u001b[2J')).toBe('a\\u000aforged: yes\\u001b[2J');
});

it("a consumer's dead-lettered event carries the bounded id", () => {
  const events: TransportConsumerEvent[] = [];
  const emit = consumerEmitter('kafka', 'orders', (event) => void events.push(event));
  emit({ type: 'dead-lettered', reason: 'invalid_text', messageId: `${'y'.repeat(5_000)}\r\n` });
  const [event] = events;
  expect(event).toMatchObject({ type: 'dead-lettered', transport: 'kafka', source: 'orders' });
  const id = (event as { messageId: string }).messageId;
  expect(id.length).toBeLessThan(300);
  expect(id).not.toMatch(/[\r\n]/);
});
