/**
 * Review finding (failed first), review 96. amqplib decodes a delivery's header table
 * recursively: a table nested some thousands of levels deep (6 bytes a level: 5,000 levels are
 * 30 KB, well within RabbitMQ's frame size), which a producer on another client publishes as
 * easily, overflows its stack while it decodes the content header. The connection closes
 * ("Maximum call stack size exceeded"), the delivery goes back to the queue, and every consumer of
 * it loses its connection on it again: the queue stalls for good, its neighbours with it.
 * What should happen: the deep header is cut at MAX_HEADER_DEPTH before amqplib decodes it (a
 * nested table is no header ferry stores anyway), the delivery is stored, its neighbours too.
 * amqplib's encoder is recursive as well, so the test publishes it from a child process with a
 * larger stack.
 */
import { execFileSync } from 'node:child_process';
import { AMQP_URL } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

const DEPTH = 5_000;

/** Publishes (with a confirm) one message whose header `deep` nests DEPTH tables, from a child with a large stack. */
function publishDeep(queue: string, messageId: string): void {
  const script = `
    const amqp = require(${JSON.stringify(require.resolve('amqplib'))});
    (async () => {
      let table = { leaf: 'x' };
      for (let i = 0; i < ${DEPTH}; i += 1) table = { a: table };
      const connection = await amqp.connect(${JSON.stringify(AMQP_URL)});
      const channel = await connection.createConfirmChannel();
      channel.sendToQueue(${JSON.stringify(queue)}, Buffer.from('{"n":0}'), {
        messageId: ${JSON.stringify(messageId)}, contentType: 'application/json', headers: { deep: table, kept: 'yes' },
      });
      await channel.waitForConfirms();
      await connection.close();
    })().catch((error) => { console.error(error); process.exit(1); });`;
  execFileSync(process.execPath, ['--stack-size=7000', '-e', script], { stdio: 'inherit', timeout: 30_000 });
}

describe('review96: a header table nested thousands of levels deep on the RabbitMQ consumer', () => {
  const f = useConsumerFixture(() => ({ prefetch: 10 }));

  it('is stored with the deep header cut, and the next message goes through', async () => {
    // attach declares the work queue.
    await f.attach({ connection: { url: AMQP_URL } });
    publishDeep(f.queue, 'deep');
    f.broker.channel.sendToQueue(f.queue, Buffer.from('{"n":1}'), {
      messageId: 'after',
      contentType: 'application/json',
    });
    const dead = await f.settled(2, 60_000);
    expect(dead).toEqual([]);
    await f.expectStoredOnce(['deep', 'after']);
  }, 120_000);
});
