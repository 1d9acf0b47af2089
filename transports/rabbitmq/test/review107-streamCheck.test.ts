/**
 * Review 107: the stream check of review 106 refused queues that are no stream.
 *
 * The consumer took a queue for a stream when queue.declare-ok, after its consume-ok, counted no
 * consumer. But RabbitMQ 3.10 answers that count for a quorum queue by asking the queue's Raft
 * leader with a 250 ms timeout, and answers 0 consumers, 0 messages on a timeout or an error
 * (rabbit_quorum_queue:stat/2: "Leader is not available, cluster might be in minority"): a loaded
 * broker, a leader on another node, a leader moving. A healthy quorum queue was then refused as a
 * stream: ready() rejected with FERRY_PERMANENT_FAILURE, the deliveries it had received went back
 * to the queue (each one a delivery-count towards x-delivery-limit), and again at every retry.
 *
 * That broker answer cannot be caused on demand on a one-node test broker: the count of the real
 * answer is replaced by 0 (amqplib's checkQueue, the round trip itself is real). Now a delivery
 * without `x-stream-offset` (which RabbitMQ sets on every delivery of a stream) proves the queue
 * is no stream, and a count of 0 is read again before it is believed.
 */
import { FerryError } from '@ferry/core';
import type { Channel } from 'amqplib';
import { useConsumerFixture } from './support/consumerFixture';

describe('review107: a quorum queue whose consumer count reads 0 is no stream', () => {
  const f = useConsumerFixture();
  let spy: jest.SpyInstance | null = null;
  /** How many more checks of the test's queue answer 0 consumers. */
  let zeroAnswers = 0;
  let checks = 0;

  function answerZeroConsumers(times: number): void {
    zeroAnswers = times;
    const prototype = Object.getPrototypeOf(f.broker.channel) as Channel;
    const checkQueue = prototype.checkQueue;
    spy = jest.spyOn(prototype, 'checkQueue').mockImplementation(async function (
      this: Channel,
      queue: string,
    ) {
      const answer = await checkQueue.call(this, queue);
      if (queue !== f.queue) return answer;
      checks += 1;
      if (zeroAnswers === 0) return answer;
      zeroAnswers -= 1;
      return { ...answer, consumerCount: 0, messageCount: 0 };
    });
  }

  beforeEach(() => {
    checks = 0;
  });

  afterEach(async () => {
    spy?.mockRestore();
    spy = null;
    await f.broker.channel.deleteQueue(f.queue).catch(() => undefined);
  });

  async function quorumQueueWith(ids: readonly string[]): Promise<void> {
    await f.broker.channel.assertQueue(f.queue, {
      durable: true,
      arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 3 },
    });
    for (const id of ids) f.broker.channel.sendToQueue(f.queue, Buffer.from('{"n":1}'), { messageId: id });
    await f.broker.channel.checkQueue(f.queue);
  }

  it('deliveries waiting and every count 0: attaches, and stores each delivery once', async () => {
    const waiting = Array.from({ length: 10 }, (_, i) => `waiting-${i}`);
    await quorumQueueWith(waiting);
    answerZeroConsumers(Number.MAX_SAFE_INTEGER);
    const consumer = await f.attach({ declareTopology: false }).catch((error: unknown) => error);
    if (consumer instanceof FerryError) throw new Error(`refused a quorum queue: ${consumer.message}`);
    await f.expectStoredOnce(waiting);
  }, 60_000);

  it('no delivery and the first counts 0: attaches after reading the count again, and delivers', async () => {
    await quorumQueueWith([]);
    answerZeroConsumers(2);
    const consumer = await f.attach({ declareTopology: false }).catch((error: unknown) => error);
    if (consumer instanceof FerryError) throw new Error(`refused a quorum queue: ${consumer.message}`);
    expect(checks).toBe(3);
    f.broker.channel.sendToQueue(f.queue, Buffer.from('{"n":1}'), { messageId: 'after' });
    await f.expectStoredOnce(['after']);
  }, 60_000);
});
