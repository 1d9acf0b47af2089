import { InMemoryBroker, type InMemoryDelivery } from '@ferry/testing';

const delivery = (id: string): InMemoryDelivery => ({ body: Buffer.from('{}'), messageId: id, headers: {} });
const ids = (items: readonly { delivery: InMemoryDelivery }[]) =>
  items.map((item) => item.delivery.messageId);

describe('InMemoryBroker', () => {
  test('a restart puts unacked deliveries back at the head of their queue and ignores late acks', () => {
    const broker = new InMemoryBroker();
    broker.declareQueue('q');
    ['a', 'b', 'c'].forEach((id) => broker.send('q', delivery(id)));
    const first = broker.take('q', 2);
    broker.restart();
    broker.ack(first);
    expect(ids(broker.take('q', 10))).toEqual(['a', 'b', 'c']);
  });

  test('a nacked batch goes back to the head of the queue in its order', () => {
    const broker = new InMemoryBroker();
    broker.declareQueue('q');
    ['a', 'b', 'c'].forEach((id) => broker.send('q', delivery(id)));
    broker.nack(broker.take('q', 2));
    expect(ids(broker.take('q', 10))).toEqual(['a', 'b', 'c']);
  });

  test('a delivery to a queue that does not exist is not accepted by the broker', () => {
    const broker = new InMemoryBroker();
    expect(broker.send('nowhere', delivery('a'))).toBe(false);
  });

  test('hasQueue() tells a declared queue from one never declared or deleted', () => {
    const broker = new InMemoryBroker();
    broker.declareQueue('q');
    const before = [broker.hasQueue('q'), broker.hasQueue('nowhere')];
    broker.deleteQueue('q');
    expect([...before, broker.hasQueue('q')]).toEqual([true, false, false]);
  });

  test('what take() and deadLetters() hand out is a copy: changing it changes no redelivery nor dead letter', () => {
    const broker = new InMemoryBroker();
    broker.declareQueue('q');
    broker.send('q', { body: Buffer.from('{"n":1}'), messageId: 'a', headers: { 'x-app': 'kept' } });
    broker.send('q', { body: Buffer.from('{"n":2}'), messageId: 'b', headers: { 'x-app': 'kept' } });
    const spoil = (held: InMemoryDelivery) => {
      held.body.write('{"n":9}');
      (held.headers as Record<string, string>)['x-app'] = 'changed';
    };
    const taken = broker.take('q', 2);
    taken.forEach((item) => spoil(item.delivery));
    broker.nack(taken);
    const [again, letter] = broker.take('q', 2);
    broker.deadLetter(letter!, 'inbox_invalid', 'test');
    broker.deadLetters('q').forEach((dead) => spoil(dead.delivery));
    const seen = (held: InMemoryDelivery | undefined) => [held?.body.toString(), held?.headers['x-app']];
    expect([seen(again?.delivery), seen(broker.deadLetters('q')[0]?.delivery)]).toEqual([
      ['{"n":1}', 'kept'],
      ['{"n":2}', 'kept'],
    ]);
  });

  describe('retryLater', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    test('holds the delivery for its delay, then appends it to the tail with one more transport attempt', () => {
      const broker = new InMemoryBroker();
      broker.declareQueue('q');
      ['a', 'b'].forEach((id) => broker.send('q', delivery(id)));
      const [first] = broker.take('q', 1);
      expect(broker.retryLater(first!, 1_000)).toBe(true);
      broker.send('q', delivery('c'));
      // Waiting out its delay: still held, not ready; a restart does not bring it back sooner.
      broker.restart();
      expect({ held: broker.held('q'), ready: ids(broker.take('q', 10)) }).toEqual({
        held: 3,
        ready: ['b', 'c'],
      });
      jest.advanceTimersByTime(1_000);
      const [back] = broker.take('q', 10);
      expect([back?.delivery.messageId, back?.transportAttempts]).toEqual(['a', 1]);
    });

    test('a queue deleted by the end of the delay does not get the delivery back', () => {
      const broker = new InMemoryBroker();
      broker.declareQueue('q');
      broker.send('q', delivery('a'));
      broker.retryLater(broker.take('q', 1)[0]!, 10);
      broker.deleteQueue('q');
      jest.advanceTimersByTime(10);
      broker.declareQueue('q');
      expect(broker.held('q')).toBe(0);
    });

    test('a delivery that is not unacked is left alone, and a delay no timer can wait is refused', () => {
      const broker = new InMemoryBroker();
      broker.declareQueue('q');
      broker.send('q', delivery('a'));
      const [item] = broker.take('q', 1);
      expect(() => broker.retryLater(item!, 2 ** 31)).toThrow(
        expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option: 'delayMs' }),
      );
      broker.ack([item!]);
      expect([broker.retryLater(item!, 10), broker.held('q')]).toEqual([false, 0]);
    });
  });
});
