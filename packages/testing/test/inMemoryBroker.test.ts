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
});
